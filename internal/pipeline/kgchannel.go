package pipeline

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// The KG's graph channel (docs/method.md, "Beyond the paper: graph recall"):
// the documents of the entities reachable from Q's entities in graph_recall
// hops, ranked by how well the relations on the path match Q (pathrel) plus
// graph_weight x cos(enc(Q), enc(D)). It is off in the paper's method
// (graph_recall 0). Its stages, each a function from the previous one's
// value to its own:
//
//	roots          []pathrel.Root     Q's linked entities and the top stage-1 documents' (kgRoots)
//	neighbourhoods kgNeighbourhoods   the subgraphs walked from them (this file)
//	reach          kgWalk             the best path to every entity reached (this file)
//	documents      kgDocuments        the reached entities' documents (kgdocs.go), their
//	                                  popularity and, from Weaviate, the cosines the scores can need (kgcosines.go)
//	scores         kgScored           the graph_recall_k best by graph score (kgscore.go)
//	paths          graphChannel       the kept documents with their paths' texts (kgscore.go)
//
// The relation query the reach stage reads is encoded ahead, while stage 1
// searches (kgquery.go).

// graphMaxNodes caps the subgraphs the channel walks: far above N_max, so
// that a query entity's neighbourhood is walked whole (hubs are kept, never
// expanded).
const graphMaxNodes = 4000

// graphMaxEntities caps the reachable entities whose documents are fetched,
// best paths first.
const graphMaxEntities = 2000

// graphChannel is the channel's output for one request: its candidates, best
// first, the path of each document it reached, and the walk behind them.
type graphChannel struct {
	hits  []retrieval.Hit
	paths map[string]GraphPath // by document ID
	// the walk, kept for the results' path explanations (paths.go); empty
	// when the channel failed
	kgWalk
}

// kgNeighbourhoods are the channel's roots and the subgraphs walked from
// them, by root QID, and the degrees of their nodes when the graph read
// them in the same round trip (nil: popularity asks Entities).
type kgNeighbourhoods struct {
	roots   []pathrel.Root
	subs    map[string]kg.Subgraph
	degrees map[string]int
}

// kgWalk is the reach stage's output: the best path to every entity reached,
// best first, and the vector the relation cosines read.
type kgWalk struct {
	kgNeighbourhoods
	reached []pathrel.Path
	relq    []float32
}

// relationVector is the vector the request's relation cosines read: the
// one the channel walked with when it did, else relvec (the results' path
// explanations score their paths as the channel did).
func (w kgWalk) relationVector(relvec []float32) []float32 {
	if w.relq == nil {
		return relvec
	}
	return w.relq
}

// emptyChannel is a channel that adds nothing.
func emptyChannel() graphChannel { return graphChannel{paths: map[string]GraphPath{}} }

// kgChannel runs the channel's stages for in. A graph or index failure
// leaves the channel empty and says so; only the context's own errors and
// model failures fail the request.
func (r request) kgChannel(ctx context.Context, in channelQuery) (graphChannel, error) {
	if r.opts.GraphRecall == 0 {
		return emptyChannel(), nil
	}
	defer r.trace.timed("graph_recall", time.Now())
	roots := kgRoots(kg.QIDs(in.mentions), in.hits, r.opts.GraphRoots)
	if len(roots) == 0 {
		r.trace.fallback("graph_recall_no_entities", "the query links to no entity: the graph channel adds nothing")
		return emptyChannel(), nil
	}
	// A failing graph backend is graph_unavailable wherever it fails (the
	// one signal operators watch for a graph outage: with
	// structure_needs_channel an empty channel also turns the structural
	// path off, so no later graph call would report it); a failing index
	// is the channel's own graph_recall_unavailable.
	// The backends' parts of graph_recall are timed on their own too
	// (graph_neighbourhoods, graph_documents, graph_kept), without metrics:
	// the profile of a remote deployment.
	t := time.Now()
	nb, err := r.neighbourhoods(ctx, roots, in.nbq.of(in.mentions))
	if err != nil {
		return r.channelFailed(ctx, "graph_unavailable", "the graph channel's subgraph extraction", err)
	}
	r.trace.add("graph_neighbourhoods", time.Since(t))
	walk, err := r.reach(ctx, in, nb)
	if err != nil {
		return graphChannel{}, err
	}
	t = time.Now()
	docs, err := r.entityDocuments(ctx, in.qvec, walk)
	if err != nil {
		return r.channelFailed(ctx, "graph_recall_unavailable", "fetching the entities' documents", err)
	}
	pop, err := r.popularity(ctx, docs.docs, walk.degrees)
	if err != nil {
		return graphChannel{}, err
	}
	if docs, err = r.indexCosines(ctx, in.qvec, docs, pop); err != nil {
		return r.channelFailed(ctx, "graph_recall_unavailable", "reading the entities' documents' cosines", err)
	}
	r.trace.add("graph_documents", time.Since(t))
	sc := r.scoreDocuments(docs, pop)
	t = time.Now()
	ch, err := r.keptPaths(ctx, sc)
	r.trace.add("graph_kept", time.Since(t))
	if err != nil {
		return r.channelFailed(ctx, "graph_recall_unavailable", "fetching the entities' documents", err)
	}
	ch.kgWalk = walk
	return ch, nil
}

// channelFailed is the channel after a backend failure: empty, with the
// fallback name in the trace; a done context is the request's error.
func (r request) channelFailed(ctx context.Context, name, what string, err error) (graphChannel, error) {
	if ctx.Err() != nil {
		return graphChannel{}, ctx.Err()
	}
	r.trace.fallback(name, what+" failed, the graph channel adds nothing: "+err.Error())
	return emptyChannel(), nil
}

// kgRoots are the channel's roots: Q's linked entities, then the documents
// of the first n search hits (a document's ID is its entity's QID in the
// entity-page corpora; other IDs are unknown to the graph and walk
// nowhere), each once.
func kgRoots(linked []string, hits []retrieval.Hit, n int) []pathrel.Root {
	out := pathrel.Mentioned(linked...)
	seen := set(linked)
	for i := 0; i < len(hits) && i < n; i++ {
		if id := hits[i].Doc.ID; !seen[id] && kg.ValidQID(id) {
			seen[id] = true
			out = append(out, pathrel.Root{QID: id})
		}
	}
	return out
}

// neighbourhoods are the subgraphs the channel walks from roots; those of
// the linked roots come from pf when it read them, and only the others
// (the top stage-1 documents' entities) are read here.
func (r request) neighbourhoods(ctx context.Context, roots []pathrel.Root, pf *neighbourhoodPrefetch) (kgNeighbourhoods, error) {
	qids := make([]string, 0, len(roots))
	have := map[string]bool{}
	if pf != nil {
		select {
		case <-pf.done:
		case <-ctx.Done():
			return kgNeighbourhoods{}, ctx.Err()
		}
		if pf.err != nil {
			return kgNeighbourhoods{}, pf.err
		}
		have = set(pf.qids)
	}
	for _, s := range roots {
		if !have[s.QID] {
			qids = append(qids, s.QID)
		}
	}
	var subs map[string]kg.Subgraph
	var deg map[string]int
	if len(qids) > 0 {
		var err error
		if subs, deg, err = r.p.channelSubgraphs(ctx, qids, r.opts.GraphRecall, r.opts.HubDegree); err != nil {
			return kgNeighbourhoods{}, err
		}
	}
	if pf != nil {
		subs, deg = mergeNeighbourhoods(pf.subs, subs), mergeDegrees(pf.degrees, deg)
	}
	return kgNeighbourhoods{roots: roots, subs: subs, degrees: deg}, nil
}

// neighbourhoodPrefetch reads the linked roots' neighbourhoods while stage
// 1 searches: on Neo4j a round trip off the request's path. Each root's
// neighbourhood is its own, so reading them in two calls gives what one
// call for all the roots gives.
type neighbourhoodPrefetch struct {
	qids    []string
	done    chan struct{}
	subs    map[string]kg.Subgraph
	degrees map[string]int
	err     error
}

// prefetchNeighbourhoods starts reading the neighbourhoods of the entities
// mentions link to; nil when the channel is off or nothing is linked.
func (r request) prefetchNeighbourhoods(ctx context.Context, mentions []kg.Mention) *neighbourhoodPrefetch {
	qids := kg.QIDs(mentions)
	if r.opts.GraphRecall == 0 || len(qids) == 0 {
		return nil
	}
	pf := &neighbourhoodPrefetch{qids: qids, done: make(chan struct{})}
	go func() {
		defer close(pf.done)
		pf.subs, pf.degrees, pf.err = r.p.channelSubgraphs(ctx, qids, r.opts.GraphRecall, r.opts.HubDegree)
	}()
	return pf
}

// of is pf when it was started for the same mentions' entities, else nil.
func (pf *neighbourhoodPrefetch) of(mentions []kg.Mention) *neighbourhoodPrefetch {
	if pf == nil || !slices.Equal(pf.qids, kg.QIDs(mentions)) {
		return nil
	}
	return pf
}

// mergeNeighbourhoods is a and b in one new map (b's roots are not in a).
func mergeNeighbourhoods(a, b map[string]kg.Subgraph) map[string]kg.Subgraph {
	out := make(map[string]kg.Subgraph, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// mergeDegrees is a and b in one new map; nil when both are nil (a graph
// that does not read degrees with neighbourhoods).
func mergeDegrees(a, b map[string]int) map[string]int {
	if a == nil && b == nil {
		return nil
	}
	out := make(map[string]int, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// ChannelSubgraphs are the subgraphs the graph channel walks from roots:
// hops deep, hubs (above hubDegree) kept but never expanded. The subgraph
// rule never expands a hub, the root included; the channel still walks a
// hub query entity's own neighbours: one hop (its edges only, so no path
// goes on through a neighbour), capped. One round trip on a backend that
// reads them in one (kg.Neighbourhoods).
func (p *Pipeline) ChannelSubgraphs(ctx context.Context, roots []string, hops, hubDegree int) (map[string]kg.Subgraph, error) {
	subs, _, err := p.channelSubgraphs(ctx, roots, hops, hubDegree)
	return subs, err
}

// channelSubgraphs are ChannelSubgraphs and, from a graph that reads them
// in the same round trip (kg.NeighbourhoodDegreeReader), their nodes'
// degrees; nil degrees otherwise.
func (p *Pipeline) channelSubgraphs(ctx context.Context, roots []string, hops, hubDegree int) (map[string]kg.Subgraph, map[string]int, error) {
	return kg.NeighbourhoodsWithDegrees(ctx, p.cfg.Graph, roots, kg.SubgraphParams{Hops: hops, MaxNodes: graphMaxNodes, HubDegree: hubDegree})
}

// reach is the best path from a root to every entity of the
// neighbourhoods, ranked by the question relevance of its relations
// (pathrel.Reach), with the relation query in.relq encoded ahead, or
// encodes it now. An encoder failure fails the request, as any does.
func (r request) reach(ctx context.Context, in channelQuery, nb kgNeighbourhoods) (kgWalk, error) {
	prior, err := r.stepPrior(ctx, in.relvec)
	if err != nil {
		return kgWalk{}, err
	}
	relq, err := r.relationQueryOf(ctx, in.relq, in.relvec, in.mentions)
	if err != nil {
		return kgWalk{}, err
	}
	paths, err := r.p.relations(r.opts.GraphRelations == "directed").Reach(ctx, relq, nb.roots, nb.subs, r.opts.GraphRecall, prior)
	if err != nil {
		if ctx.Err() != nil {
			return kgWalk{}, ctx.Err()
		}
		return kgWalk{}, err
	}
	return kgWalk{kgNeighbourhoods: nb, reached: paths, relq: relq}, nil
}

// relations returns the relation-text cache for the request's text mode.
func (p *Pipeline) relations(directed bool) *pathrel.Relations {
	if directed {
		return p.relsDirected
	}
	return p.relsPlain
}
