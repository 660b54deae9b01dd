package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// The graph channel (docs/method.md, "Beyond the paper: graph recall"): the
// documents of the entities reachable from Q's entities in graph_recall hops,
// ranked by how well the relations on the path match Q (pathrel) plus
// graph_weight x cos(enc(Q), enc(D)), join the candidates of both searches.
// It is off by default (graph_recall 0): the paper's method is unchanged.

// graphMaxNodes caps the subgraphs the channel walks: far above N_max, so
// that a query entity's neighbourhood is walked whole (hubs are kept, never
// expanded).
const graphMaxNodes = 4000

// graphMaxEntities caps the reachable entities whose documents are fetched,
// best paths first.
const graphMaxEntities = 2000

// GraphPath is the path that brought a document in through the graph
// channel, and its scores.
type GraphPath struct {
	Path      string         `json:"path"`      // Q1 -[relation]-> Q2
	Steps     []pathrel.Step `json:"steps"`     // the path's edges
	Relevance float64        `json:"relevance"` // the path's question relevance
	Score     float64        `json:"score"`     // relevance + graph_weight x cos(enc(Q), enc(D)) + popularity
	// Popularity is graph_popularity x ln(1 + the entity's degree), the part
	// of Score that says how well known the entity is.
	Popularity float64 `json:"popularity,omitempty"`
	// Fanout is -graph_fanout x the mean ln(n) of the path's steps, n the
	// entities a step's relation reaches from its node (graphfan.go), the
	// part of Score that keeps a relation with many objects from flooding
	// the ranking.
	Fanout float64 `json:"fanout,omitempty"`
}

// graphChannel is the channel's output for one request: its candidates, best
// first, and the path of each document it reached.
type graphChannel struct {
	hits  []retrieval.Hit
	paths map[string]GraphPath // by document ID
	// roots, the subgraphs walked from them and the best path to every
	// entity reached, kept for the results' path explanations (paths.go)
	roots   []pathrel.Root
	subs    map[string]kg.Subgraph
	reached []pathrel.Path
	// relq is the masked question the relation cosines read
	// (graph_relation_query masked; graphquery.go), nil when they read enc(Q)
	relq []float32
}

// relations returns the relation-text cache for the request's text mode.
func (p *Pipeline) relations(directed bool) *pathrel.Relations {
	if directed {
		return p.relsDirected
	}
	return p.relsPlain
}

// graphRecall runs the channel from roots (channelRoots). A graph or
// index failure leaves the channel empty and says so; only the context's
// own errors fail the request.
func (r request) graphRecall(ctx context.Context, qvec []float32, starts []pathrel.Root) (graphChannel, error) {
	ch := graphChannel{paths: map[string]GraphPath{}}
	o := r.opts
	if o.GraphRecall == 0 {
		return ch, nil
	}
	defer r.trace.timed("graph_recall", time.Now())
	roots := make([]string, len(starts))
	for i, s := range starts {
		roots[i] = s.QID
	}
	if len(roots) == 0 {
		r.trace.fallback("graph_recall_no_entities", "the query links to no entity: the graph channel adds nothing")
		return ch, nil
	}
	// A failing graph backend is graph_unavailable wherever it fails (the
	// one signal operators watch for a graph outage: with
	// structure_needs_channel an empty channel also turns the structural
	// path off, so no later graph call would report it); a failing index
	// is the channel's own graph_recall_unavailable.
	fail := func(name, what string, err error) (graphChannel, error) {
		if ctx.Err() != nil {
			return graphChannel{}, ctx.Err()
		}
		r.trace.fallback(name, what+" failed, the graph channel adds nothing: "+err.Error())
		return graphChannel{paths: map[string]GraphPath{}}, nil
	}
	subs, err := r.p.ChannelSubgraphs(ctx, roots, o.GraphRecall, o.HubDegree)
	if err != nil {
		return fail("graph_unavailable", "the graph channel's subgraph extraction", err)
	}
	ch.roots, ch.subs = starts, subs
	prior, err := r.stepPrior(ctx, qvec)
	if err != nil {
		return graphChannel{}, err
	}
	relq, err := r.relationQueryOf(ctx, r.relq, qvec)
	if err != nil {
		return graphChannel{}, err
	}
	paths, err := r.p.relations(o.GraphRelations == "directed").Reach(ctx, relq, starts, subs, o.GraphRecall, prior)
	if err != nil {
		if ctx.Err() != nil {
			return graphChannel{}, ctx.Err()
		}
		return graphChannel{}, err // the encoder failed: as any encoder failure
	}
	ch.reached = paths
	if o.GraphRelationQuery == "masked" {
		ch.relq = relq
	}
	if len(paths) > graphMaxEntities {
		paths = paths[:graphMaxEntities]
	}
	ids := make([]string, len(paths))
	byID := make(map[string]pathrel.Path, len(paths))
	for i, p := range paths {
		ids[i], byID[p.Entity] = p.Entity, p
	}
	// An entity's document is the document whose ID is its QID (the
	// convention of the entity-page corpora, codexm and codexm-film).
	reached, err := r.reachedCosines(ctx, qvec, ids)
	if err != nil {
		return fail("graph_recall_unavailable", "fetching the entities' documents", err)
	}
	pop, err := r.popularity(ctx, reached)
	if err != nil {
		return graphChannel{}, err
	}
	fan := r.fanout(subs)
	// Only the graph_recall_k best are kept: a document whose score cannot
	// reach the k-th best so far, whatever its cosine, is passed over
	// (documents come best path first, so most are). The bound is strict,
	// so the kept ones are those of the full ranking.
	floor := newScoreFloor(o.GraphRecallK)
	reach := math.Abs(o.GraphWeight)*(1+1e-9) + 1e-12 // the most the cosine term adds
	unfetched := map[string]bool{}                    // hits that hold only their ID so far
	for _, d := range reached {
		p := byID[d.id]
		gp := GraphPath{Steps: p.Steps, Relevance: p.Relevance, Score: p.Relevance}
		if o.GraphRelations == "none" {
			gp.Score = 0 // the ablation: the document's cosine alone ranks
		}
		gp.Popularity = pop[d.id]
		if fan != nil {
			gp.Fanout = fan.of(p)
		}
		if floor.below(gp.Score + gp.Popularity + gp.Fanout + reach) {
			continue
		}
		gp.Score += o.GraphWeight * d.cos()
		gp.Score += gp.Popularity
		if fan != nil {
			gp.Score += gp.Fanout
		}
		floor.add(gp.Score)
		ch.paths[d.id] = gp
		doc := retrieval.Document{ID: d.id}
		if d.doc != nil {
			doc = *d.doc
		} else {
			unfetched[d.id] = true
		}
		ch.hits = append(ch.hits, retrieval.Hit{Doc: doc, Score: gp.Score})
	}
	if len(reached) == 0 && len(paths) > 0 && o.Filter.Empty() {
		r.trace.fallback("graph_recall_no_documents", "no reachable entity has a document (document IDs are not the entities' QIDs): the graph channel adds nothing")
	}
	ch.hits = best(ch.hits, o.GraphRecallK)
	if ch.hits, err = r.fetchKept(ctx, ch.hits, unfetched); err != nil {
		return fail("graph_recall_unavailable", "fetching the entities' documents", err)
	}
	if len(ch.paths) > len(ch.hits) {
		kept := make(map[string]GraphPath, len(ch.hits))
		for _, h := range ch.hits {
			kept[h.Doc.ID] = ch.paths[h.Doc.ID]
		}
		ch.paths = kept
	}
	// The paths' texts, for the documents kept only.
	for i, h := range ch.hits {
		gp := ch.paths[h.Doc.ID]
		gp.Path = byID[h.Doc.ID].String()
		ch.paths[h.Doc.ID] = gp
		ch.hits[i].Explain = fmt.Sprintf("kg: %s (relevance %.3f)", gp.Path, gp.Relevance)
	}
	return ch, nil
}

// scoreFloor is the k-th best of the scores added so far (a min-heap of
// the k best): below reports whether a score is less than it, so that a
// document with no better bound cannot be among the k best.
type scoreFloor struct {
	k    int
	heap []float64
}

func newScoreFloor(k int) *scoreFloor { return &scoreFloor{k: k, heap: make([]float64, 0, max(k, 0))} }

func (f *scoreFloor) below(bound float64) bool {
	return f.k <= 0 || (len(f.heap) == f.k && bound < f.heap[0])
}

func (f *scoreFloor) add(s float64) {
	h := f.heap
	if f.k <= 0 {
		return
	}
	if len(h) < f.k {
		h = append(h, s)
		for i := len(h) - 1; i > 0 && h[(i-1)/2] > h[i]; i = (i - 1) / 2 {
			h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
		}
		f.heap = h
		return
	}
	if s <= h[0] {
		return
	}
	h[0] = s
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(h) && h[l] < h[m] {
			m = l
		}
		if l+1 < len(h) && h[l+1] < h[m] {
			m = l + 1
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// best are the k best hits, by score, then document ID (IDs are unique,
// so the order is total). It sorts their indices, not the hits themselves,
// which are large.
func best(hits []retrieval.Hit, k int) []retrieval.Hit {
	idx := make([]int, len(hits))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int {
		if hits[i].Score != hits[j].Score {
			return cmp.Compare(hits[j].Score, hits[i].Score)
		}
		return strings.Compare(hits[i].Doc.ID, hits[j].Doc.ID)
	})
	if len(idx) > k {
		idx = idx[:k]
	}
	out := make([]retrieval.Hit, len(idx))
	for n, i := range idx {
		out[n] = hits[i]
	}
	return out
}

// reachedDoc is a reached entity's document as the channel scores it: its
// ID, and its cosine with enc(Q) or the fetched document to compute it from.
type reachedDoc struct {
	id    string
	cosQD float64
	doc   *retrieval.Document // nil when the index computed the cosine
	qc    *cosiner
}

// cos is cos(enc(Q), enc(D)); 0 for a fetched document without a vector.
func (d reachedDoc) cos() float64 {
	if d.doc == nil {
		return d.cosQD
	}
	if len(d.doc.Vector) == 0 {
		return 0
	}
	return d.qc.cosine(d.doc.Vector)
}

// reachedCosines are the documents of ids that pass the request's filter, in
// the order of ids. An index that computes cosines where the documents are
// (retrieval.CosineReader: Weaviate) sends only their IDs and cosines, and
// fetchKept fetches the few kept; another one's documents are fetched whole
// here (memindex: no copy, no wire), their cosines computed as needed.
func (r request) reachedCosines(ctx context.Context, qvec []float32, ids []string) ([]reachedDoc, error) {
	if c, ok := r.p.cfg.Index.(retrieval.CosineReader); ok {
		cos, err := c.Cosines(ctx, qvec, ids, r.opts.Filter)
		if err != nil {
			return nil, err
		}
		out := make([]reachedDoc, 0, len(cos))
		for _, id := range ids {
			if v, ok := cos[id]; ok {
				out = append(out, reachedDoc{id: id, cosQD: v})
			}
		}
		return out, nil
	}
	docs, err := r.p.cfg.Index.Documents(ctx, ids)
	if err != nil {
		return nil, err
	}
	keep := filterOf(r.opts.Filter)
	qc := newCosiner(qvec)
	out := make([]reachedDoc, 0, len(docs))
	for i := range docs {
		if keep(docs[i]) {
			out = append(out, reachedDoc{id: docs[i].ID, doc: &docs[i], qc: &qc})
		}
	}
	return out, nil
}

// fetchKept gives the kept hits that hold only their ID (unfetched: their
// cosines came from the index) their documents, in one Documents call; a
// document deleted since is dropped.
func (r request) fetchKept(ctx context.Context, hits []retrieval.Hit, unfetched map[string]bool) ([]retrieval.Hit, error) {
	var ids []string
	for _, h := range hits {
		if unfetched[h.Doc.ID] {
			ids = append(ids, h.Doc.ID)
		}
	}
	if len(ids) == 0 {
		return hits, nil
	}
	docs, err := r.p.cfg.Index.Documents(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]retrieval.Document, len(docs))
	for _, d := range docs {
		byID[d.ID] = d
	}
	out := hits[:0]
	for _, h := range hits {
		if unfetched[h.Doc.ID] {
			d, ok := byID[h.Doc.ID]
			if !ok {
				continue
			}
			h.Doc = d
		}
		out = append(out, h)
	}
	return out, nil
}

// popularity is graph_popularity x ln(1 + degree) of each document's
// entity, by document ID; empty when the option is off. The degrees come in
// one Entities call; when that fails the channel ranks without them and the
// trace says so.
func (r request) popularity(ctx context.Context, docs []reachedDoc) (map[string]float64, error) {
	w := r.opts.GraphPopularity
	if w == 0 || len(docs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.id
	}
	ents, err := r.p.cfg.Graph.Entities(ctx, ids)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.trace.fallback("graph_unavailable", "reading the reached entities' degrees failed, the graph channel ranks without popularity: "+err.Error())
		return nil, nil
	}
	out := make(map[string]float64, len(ents))
	for id, e := range ents {
		out[id] = w * math.Log1p(float64(e.Degree))
	}
	return out, nil
}

// ChannelSubgraphs are the subgraphs the graph channel walks from roots:
// hops deep, hubs (above hubDegree) kept but never expanded. The subgraph
// rule never expands a hub, the root included; the channel still walks a
// hub query entity's own neighbours: one hop (its edges only, so no path
// goes on through a neighbour), capped. One round trip on a backend that
// reads them in one (kg.Neighbourhoods).
func (p *Pipeline) ChannelSubgraphs(ctx context.Context, roots []string, hops, hubDegree int) (map[string]kg.Subgraph, error) {
	return kg.Neighbourhoods(ctx, p.cfg.Graph, roots, kg.SubgraphParams{Hops: hops, MaxNodes: graphMaxNodes, HubDegree: hubDegree})
}

// filterOf is the request's filter as a predicate on documents.
func filterOf(f retrieval.Filter) func(retrieval.Document) bool {
	ids, ents := set(f.IDs), set(f.AnyEntities)
	return func(d retrieval.Document) bool {
		if len(ids) > 0 && !ids[d.ID] {
			return false
		}
		if len(ents) == 0 {
			return true
		}
		for _, e := range d.Entities {
			if ents[e] {
				return true
			}
		}
		return false
	}
}

func set(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// mergeHits is the union of a search's hits and the graph channel's, the
// search's first, each document once.
func mergeHits(search, graph []retrieval.Hit) []retrieval.Hit {
	if len(graph) == 0 {
		return search
	}
	seen := make(map[string]bool, len(search))
	out := append([]retrieval.Hit(nil), search...)
	for _, h := range search {
		seen[h.Doc.ID] = true
	}
	for _, h := range graph {
		if !seen[h.Doc.ID] {
			seen[h.Doc.ID] = true
			out = append(out, h)
		}
	}
	return out
}

// withGraph marks the documents the graph channel reached and adds
// graph_boost x their graph score to their fused score.
func (r request) withGraph(docs []Doc) {
	if r.graph == nil || len(r.graph.paths) == 0 {
		return
	}
	for i := range docs {
		gp, ok := r.graph.paths[docs[i].ID]
		if !ok {
			continue
		}
		g := gp
		docs[i].Breakdown.Source, docs[i].Breakdown.Graph = "kg", &g
		docs[i].Score += r.opts.GraphBoost * gp.Score
	}
}

// GraphWalk is the graph channel alone (the kg-walk system): Q is encoded
// and linked, and the documents of the entities reachable from its entities
// are ranked by their graph score, no DMAR stage. A query that links to no
// entity ranks nothing. graph_recall 0 is walked as 1.
func (p *Pipeline) GraphWalk(ctx context.Context, query string, opts Options) (*Result, error) {
	begin := time.Now()
	query, err := cleanQuery(query)
	if err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.GraphRecall == 0 {
		opts.GraphRecall = 1
	}
	r := p.newRequest(query, opts)
	vecs, err := p.cfg.Encoder.Encode(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("encode query: %w", err)
	}
	if p.cfg.RelationEncoder != nil {
		if _, err := r.encodeRelationQuestion(ctx, []string{query}); err != nil {
			return nil, err
		}
	}
	ms, err := r.linkWith(ctx, vecs[0])
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("link: %w", err)
	}
	var hits []retrieval.Hit
	if opts.GraphRoots > 0 {
		if hits, err = p.cfg.Index.Search(ctx, r.stage1Query(vecs[0], opts.GraphRoots)); err != nil {
			return nil, fmt.Errorf("stage 1 search: %w", err)
		}
	}
	r.mentions = ms
	ch, err := r.graphRecall(ctx, vecs[0], channelRoots(kg.QIDs(ms), hits, opts.GraphRoots))
	if err != nil {
		return nil, err
	}
	*r.graph = ch
	res := &Result{Query: query, Options: r.opts, TimingsMS: r.trace.timings, Fallbacks: r.trace.fallbacks,
		Results: []Doc{}, Anchors: []Anchor{}, QueryEntities: queryEntities(ms, nil), QuerySubgraphs: []kg.Subgraph{}}
	for i, h := range ch.hits {
		if i == opts.K {
			break
		}
		d := Doc{ID: h.Doc.ID, Title: h.Doc.Title, Text: h.Doc.Text, Entities: h.Doc.Entities, Rank: i + 1, Score: h.Score,
			Breakdown: Breakdown{Stage: "kg", SearchScore: h.Score, Explain: h.Explain}}
		if len(h.Doc.Vector) > 0 {
			d.Breakdown.Semantic = cosine(vecs[0], h.Doc.Vector)
		}
		gp := ch.paths[h.Doc.ID]
		d.Breakdown.Source, d.Breakdown.Graph = "kg", &gp
		res.Results = append(res.Results, d)
	}
	ix, err := r.namePaths(ctx, vecs[0], nil, res.QueryEntities, res.Results)
	if err != nil {
		return nil, err
	}
	ix.explainPaths(res.Results)
	if insp, ok := p.cfg.Graph.(kg.Inspector); ok {
		res.Neo4jPaths = pathStatement(insp, res.Results)
	}
	res.Fallbacks = r.trace.fallbacks
	res.TimingsMS["total"] = float64(time.Since(begin).Microseconds()) / 1000
	return res, nil
}

// stepPrior is the learned relation prior for Q weighted by path_prior, or
// nil when path_prior is 0 or no prior model is loaded (then path relevance
// is the cosine alone, and the response says so). A model failure fails the
// request, as any model failure does.
func (r request) stepPrior(ctx context.Context, qvec []float32) (map[pathrel.StepKey]float64, error) {
	if r.opts.PathPrior == 0 {
		return nil, nil
	}
	if r.p.cfg.RelPrior == nil {
		if !r.trace.hasFallback("path_prior_unavailable") {
			r.trace.fallback("path_prior_unavailable", "no relation prior model is loaded: path relevance is the cosine alone")
		}
		return nil, nil
	}
	pr, err := r.p.cfg.RelPrior.Prior(ctx, r.relVec(qvec))
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("relation prior: %w", err)
	}
	for k, v := range pr {
		pr[k] = r.opts.PathPrior * v
	}
	return pr, nil
}

// channelRoots are the graph channel's roots: Q's linked entities, then the
// documents of the first graph_roots search hits (a document's ID is its
// entity's QID in the entity-page corpora; other IDs are unknown to the
// graph and walk nowhere), each once.
func channelRoots(linked []string, hits []retrieval.Hit, n int) []pathrel.Root {
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
