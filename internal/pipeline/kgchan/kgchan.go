// Package kgchan is the KG's graph channel (graph_recall; docs/method.md,
// "Beyond the paper: graph recall"): the documents of the entities
// reachable from Q's entities in graph_recall hops, ranked by how well the
// relations on the path match Q (pathrel) plus graph_weight x
// cos(enc(Q), enc(D)). It is off in the paper's method (graph_recall 0).
// It is one of the pipeline's channels (pipeline.Channel), candidate
// sources beside the searches: it takes a chanio.Query and returns an
// Output, records a backend failure as a fallback in the chanio.Trace it is
// given and adds nothing then, and never sees the request. Its stages, each
// a function from the previous one's value to its own:
//
//	roots          []pathrel.Root  Q's linked entities and the top stage-1 documents' (Roots)
//	neighbourhoods Neighbourhoods  the subgraphs walked from them (this file)
//	reach          Walk            the best path to every entity reached (this file)
//	documents      documents       the reached entities' documents (docs.go), their
//	                               popularity and, from Weaviate, the cosines the scores can need (cosines.go)
//	scores         scored          the graph_recall_k best by graph score (score.go)
//	paths          Output          the kept documents with their paths' texts (score.go)
//
// The relation query the reach stage reads can be read ahead while stage 1
// searches (query.go), and the channel run for the linked roots alone
// (ahead.go): a Channel carries them into Run.
package kgchan

import (
	"context"
	"maps"
	"time"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/mentions"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// Options are a run's settings: the request's graph_* options (their API
// names in Validate), its hub cap and filter.
type Options struct {
	Recall    int     // graph_recall: hops walked from Q's entities; 0: off
	K         int     // graph_recall_k: documents the channel returns
	Weight    float64 // graph_weight: weight of cos(enc(Q), enc(D)) in the graph score
	Relations string  // graph_relations: plain | directed | none (the ablation: relevance not used)
	// Roots (graph_roots): the entities of the top Roots stage-1 documents
	// join Q's linked entities as roots.
	Roots int
	// Popularity (graph_popularity) weighs ln(1 + degree) of a reached
	// entity in its document's graph score.
	Popularity float64
	// Mentions (graph_mentions) weighs a document that mentions a reached
	// entity (docs.go); 0: the entities' own pages only.
	Mentions float64
	// RelationQuery (graph_relation_query) is the text the relation
	// cosines read: question ("": Q) or masked (Q without its linked
	// mentions, query.go).
	RelationQuery string
	HubDegree     int // the subgraphs' hub cap (hub_degree)
	Filter        retrieval.Filter
}

// Validate checks every option against its range and names the first wrong
// one by its API name.
func (o Options) Validate() error {
	for _, err := range []error{
		errs.IntIn("graph_recall", o.Recall, 0, 2),
		errs.IntIn("graph_recall_k", o.K, 1, 500),
		errs.Unit("graph_weight", o.Weight),
		errs.OneOf("graph_relations", o.Relations, "plain", "directed", "none"),
		errs.IntIn("graph_roots", o.Roots, 0, 10),
		errs.Within("graph_popularity", o.Popularity, 0, 1),
		errs.Unit("graph_mentions", o.Mentions),
		errs.OneOf("graph_relation_query", o.RelationQuery, "", "question", "masked"),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// Channel is the channel over a graph and an index, for one request: its
// backends, the request's options, and what was read ahead for it.
type Channel struct {
	Graph kg.Graph
	// Docs holds the entities' documents (a document's ID is its entity's
	// QID); one that is a retrieval.CosineReader sends cosines instead.
	Docs         retrieval.Index
	MentionIndex mentions.Reader // the documents' mention index; nil: own pages only
	// RelationTexts are the relation texts' embeddings in the options' mode
	// (plain or directed), shared by the requests.
	RelationTexts *pathrel.Relations
	// Encoder is the relation encoder (the masked relation query).
	Encoder scoring.Encoder
	// Prior is the learned relation prior, weighed by PriorWeight in path
	// relevance; PriorWeight 0: off.
	Prior       pathrel.Prior
	PriorWeight float64
	Options
	// RelationAhead and Ahead were started while stage 1 searched
	// (PrefetchRelationQuery, RunAhead); nil: Run does their work itself.
	RelationAhead *RelationPrefetch
	Ahead         *Ahead
	// Speculate: the backends are in process, and the run ahead reads the
	// linked roots' documents before stage 1 says whether it adds roots
	// (ahead.go).
	Speculate bool
}

// graphMaxNodes caps the subgraphs the channel walks: far above N_max, so
// that a query entity's neighbourhood is walked whole (hubs are kept, never
// expanded).
const graphMaxNodes = 4000

// graphMaxEntities caps the reachable entities whose documents are fetched,
// best paths first.
const graphMaxEntities = 2000

// Output is the channel's output for one request: its candidates, best
// first, the path of each document it reached, and the walk behind them.
type Output struct {
	Hits  []retrieval.Hit
	Paths map[string]api.GraphPath // by document ID
	// the walk, kept for the results' path explanations; empty when the
	// channel failed
	Walk
}

// Neighbourhoods are the channel's roots and the subgraphs walked from
// them, by root QID, and the degrees of their nodes when the graph read
// them in the same round trip (nil: popularity asks Entities).
type Neighbourhoods struct {
	Roots   []pathrel.Root
	Subs    map[string]kg.Subgraph
	degrees map[string]int
}

// Walk is the reach stage's output: the best path to every entity reached,
// best first, and the vector the relation cosines read.
type Walk struct {
	Neighbourhoods
	Reached []pathrel.Path
	relq    []float32
}

// RelationVector is the vector the request's relation cosines read: the
// one the channel walked with when it did, else relvec (the results' path
// explanations score their paths as the channel did).
func (w Walk) RelationVector(ctx context.Context, relvec *chanio.RelVector) ([]float32, error) {
	if w.relq == nil {
		return relvec.Get(ctx)
	}
	return w.relq, nil
}

// empty is an output that adds nothing.
func empty() Output { return Output{Paths: map[string]api.GraphPath{}} }

// OwnPages reports whether the channel kept a reached entity's own page,
// not only documents that mention one: the question-blind structural score
// has question-aware evidence behind it only then (structure_needs_channel).
func (o Output) OwnPages() bool {
	for _, h := range o.Hits {
		if gp, ok := o.Paths[h.Doc.ID]; ok && gp.Bridge == nil {
			return true
		}
	}
	return false
}

// RankOf is a document's 1-based rank in the channel; 0: not reached.
func (o Output) RankOf(id string) int {
	for i, h := range o.Hits {
		if h.Doc.ID == id {
			return i + 1
		}
	}
	return 0
}

// Run is the channel's stages for q; empty when the channel is off. A
// graph or index failure leaves the channel empty and says so; only the
// context's own errors and model failures fail the run.
func (c Channel) Run(ctx context.Context, q chanio.Query, tr chanio.Trace) (Output, error) {
	if c.Recall == 0 {
		return empty(), nil
	}
	roots := Roots(kg.QIDs(q.Mentions), q.Hits, c.Roots)
	if len(roots) == 0 {
		tr.Fallback("graph_recall_no_entities", "the query links to no entity: the graph channel adds nothing")
		return empty(), nil
	}
	a := c.Ahead.Of(q.Mentions).usable(ctx, c, q)
	if out, ok, err := a.result(ctx, roots, tr); ok {
		return out, err
	}
	return c.run(ctx, q, roots, a, tr)
}

// run is the channel's stages from roots; a, when not nil, has read the
// linked roots' neighbourhoods and walked them.
//
// A failing graph backend is graph_unavailable wherever it fails (the one
// signal operators watch for a graph outage: with structure_needs_channel
// an empty channel also turns the structural path off, so no later graph
// call would report it); a failing index is the channel's own
// graph_recall_unavailable. The backends' parts of graph_recall are timed
// on their own too (graph_neighbourhoods, graph_documents, graph_kept),
// without metrics: the profile of a remote deployment.
func (c Channel) run(ctx context.Context, q chanio.Query, roots []pathrel.Root, a *Ahead, tr chanio.Trace) (Output, error) {
	t := time.Now()
	nb, err := c.neighbourhoods(ctx, roots, a)
	if err != nil {
		return failed(ctx, tr, "graph_unavailable", "the graph channel's subgraph extraction", err)
	}
	tr.Add("graph_neighbourhoods", time.Since(t))
	walk, err := c.reach(ctx, q, nb, a, tr)
	if err != nil {
		return Output{}, err
	}
	return c.fromWalk(ctx, q, walk, tr)
}

// fromWalk is the channel's stages after the walk: the reached entities'
// documents, their scores, and the kept ones with their paths.
func (c Channel) fromWalk(ctx context.Context, q chanio.Query, walk Walk, tr chanio.Trace) (Output, error) {
	t := time.Now()
	docs, err := c.entityDocuments(ctx, q.Vector, walk, tr)
	if err != nil {
		return failed(ctx, tr, "graph_recall_unavailable", "fetching the entities' documents", err)
	}
	pop, err := c.popularity(ctx, docs.docs, walk.degrees, tr)
	if err != nil {
		return Output{}, err
	}
	if docs, err = c.indexCosines(ctx, q.Vector, docs, pop, tr); err != nil {
		return failed(ctx, tr, "graph_recall_unavailable", "reading the entities' documents' cosines", err)
	}
	tr.Add("graph_documents", time.Since(t))
	sc := c.scoreDocuments(docs, pop)
	t = time.Now()
	out, err := c.keptPaths(ctx, sc)
	tr.Add("graph_kept", time.Since(t))
	if err != nil {
		return failed(ctx, tr, "graph_recall_unavailable", "fetching the entities' documents", err)
	}
	out.Walk = walk
	return out, nil
}

// failed is the channel after a backend failure: empty, with the fallback
// name in the trace; a done context is the run's error.
func failed(ctx context.Context, tr chanio.Trace, name, what string, err error) (Output, error) {
	if ctx.Err() != nil {
		return Output{}, ctx.Err()
	}
	tr.Fallback(name, what+" failed, the graph channel adds nothing: "+err.Error())
	return empty(), nil
}

// Roots are the channel's roots: Q's linked entities, then the documents
// of the first n search hits (a document's ID is its entity's QID in the
// entity-page corpora; other IDs are unknown to the graph and walk
// nowhere), each once.
func Roots(linked []string, hits []retrieval.Hit, n int) []pathrel.Root {
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
func (c Channel) neighbourhoods(ctx context.Context, roots []pathrel.Root, a *Ahead) (Neighbourhoods, error) {
	ahead, have, err := a.neighbourhoods(ctx)
	if err != nil {
		return Neighbourhoods{}, err
	}
	qids := make([]string, 0, len(roots))
	for _, s := range roots {
		if !have[s.QID] {
			qids = append(qids, s.QID)
		}
	}
	var subs map[string]kg.Subgraph
	var deg map[string]int
	if len(qids) > 0 {
		if subs, deg, err = c.subgraphs(ctx, qids); err != nil {
			return Neighbourhoods{}, err
		}
	}
	if have != nil {
		subs, deg = mergeNeighbourhoods(ahead.Subs, subs), mergeDegrees(ahead.degrees, deg)
	}
	return Neighbourhoods{Roots: roots, Subs: subs, degrees: deg}, nil
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

// Subgraphs are the subgraphs the channel walks from roots: hops deep, hubs
// (above hubDegree) kept but never expanded. The subgraph rule never
// expands a hub, the root included; the channel still walks a hub query
// entity's own neighbours: one hop (its edges only, so no path goes on
// through a neighbour), capped. One round trip on a backend that reads them
// in one (kg.Neighbourhoods).
func Subgraphs(ctx context.Context, g kg.Graph, roots []string, hops, hubDegree int) (map[string]kg.Subgraph, error) {
	subs, _, err := subgraphs(ctx, g, roots, hops, hubDegree)
	return subs, err
}

// subgraphs are Subgraphs and, from a graph that reads them in the same
// round trip (kg.NeighbourhoodDegreeReader), their nodes' degrees; nil
// degrees otherwise.
func subgraphs(ctx context.Context, g kg.Graph, roots []string, hops, hubDegree int) (map[string]kg.Subgraph, map[string]int, error) {
	return kg.NeighbourhoodsWithDegrees(ctx, g, roots, kg.SubgraphParams{Hops: hops, MaxNodes: graphMaxNodes, HubDegree: hubDegree})
}

// subgraphs are the channel's neighbourhoods of roots, at its options.
func (c Channel) subgraphs(ctx context.Context, roots []string) (map[string]kg.Subgraph, map[string]int, error) {
	return subgraphs(ctx, c.Graph, roots, c.Recall, c.HubDegree)
}

// reach is the best path from a root to every entity of the
// neighbourhoods, ranked by the question relevance of its relations
// (pathrel.Reach), with the relation query encoded ahead (RelationAhead),
// or encodes it now; a's walk of the linked roots is extended with the
// others where it can be. An encoder failure fails the request, as any
// does.
func (c Channel) reach(ctx context.Context, q chanio.Query, nb Neighbourhoods, a *Ahead, tr chanio.Trace) (Walk, error) {
	paths, relq, ok, err := a.reached(ctx, nb)
	if err == nil && !ok {
		var wk *pathrel.Walk
		if wk, relq, err = c.startWalk(ctx, q, nb, tr); err == nil {
			paths = wk.Paths()
			wk.Release()
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return Walk{}, ctx.Err()
		}
		return Walk{}, err
	}
	return Walk{Neighbourhoods: nb, Reached: paths, relq: relq}, nil
}

// startWalk walks nb's roots (pathrel.Relations.Start) with Q's relation
// prior and relation query, and returns the open walk and the query.
func (c Channel) startWalk(ctx context.Context, q chanio.Query, nb Neighbourhoods, tr chanio.Trace) (*pathrel.Walk, []float32, error) {
	prior, err := c.StepPrior(ctx, q.RelVector, tr)
	if err != nil {
		return nil, nil, err
	}
	relq, err := c.relationQueryOf(ctx, q.Text, c.RelationAhead, q.RelVector, q.Mentions)
	if err != nil {
		return nil, nil, err
	}
	wk, err := c.RelationTexts.Start(ctx, relq, nb.Roots, nb.Subs, c.Recall, prior)
	return wk, relq, err
}
