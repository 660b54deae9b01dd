package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/kgchan"
)

// result is the response as phase 2 leaves it: Q, its options, its entities
// and G_Q, and the trace so far.
func (r request) result(g grounded) *Result {
	qsubs := []kg.Subgraph{}
	for _, q := range g.st.qsubs {
		qsubs = append(qsubs, q.sg)
	}
	return &Result{
		Query: r.query, Options: r.opts, TimingsMS: r.trace.timings, Fallbacks: r.trace.fallbacks,
		Results: []Doc{}, Anchors: []Anchor{}, QueryEntities: g.entities, QuerySubgraphs: qsubs, EntStd: r.trace.entStd,
		Candidates: r.trace.candidates,
	}
}

// explainer is the explain stage: the answer and why, from the phases'
// outputs it is handed, by its own options. It reads the graph (the
// Browser statements, persisting) and the KG channel's relation texts and
// prior (paths are scored as the channel scores them); of the request, only
// the trace.
type explainer struct {
	graph kg.Graph
	kg    kgchan.Channel
	trace *trace
	explainOptions
}

// explainOptions are the explain stage's options.
type explainOptions struct {
	MaxAnchorSubgraphs int               // document subgraphs shown per anchor
	Persist            bool              // record the retrieval in the graph (Neo4j)
	Subgraph           kg.SubgraphParams // G_Q's: the Browser statement's, and the named paths' hops
}

func (o explainOptions) validate() error {
	return errs.IntIn("max_anchor_subgraphs", o.MaxAnchorSubgraphs, 0, 50)
}

// explainOptions are the explain stage's settings in o.
func (o Options) explainOptions() explainOptions {
	return explainOptions{MaxAnchorSubgraphs: o.MaxAnchorSubgraphs, Persist: o.Persist, Subgraph: o.SubgraphParams()}
}

// explainer is the request's explain stage.
func (r request) explainer() explainer {
	return explainer{graph: r.p.cfg.Graph, kg: r.channels().kg, trace: r.trace, explainOptions: r.opts.explainOptions()}
}

// explain assembles the answer and why: the results and anchors with the KG
// paths they name (paths.go), each anchor with its phi, snippet and closest
// document subgraphs, the Browser statements, and, when asked, the retrieval
// recorded in the graph.
func (e explainer) explain(ctx context.Context, res *Result, sc scored, anchors []Doc, ref reformulated, fin reranked) (*Result, error) {
	ix, err := e.namePaths(ctx, sc.relvec, sc.channels.kg, fin.st.qsubs, res.QueryEntities, fin.docs, anchors)
	if err != nil {
		return nil, err
	}
	res.Results = fin.docs
	ix.explainPaths(res.Results)
	anchors = append([]Doc(nil), anchors...)
	ix.explainPaths(anchors)
	res.ReformulatedQuery, res.Reformulator = ref.query, ref.by
	// The Browser statement draws what the explorer draws: G_Q's subgraphs
	// and the anchors'. Without anchors (the dmar preset runs none) it is
	// G_Q alone.
	var roots []string
	for _, s := range res.QuerySubgraphs {
		roots = append(roots, s.Root)
	}
	for i, a := range anchors {
		an := e.explainAnchor(a, fin.st, ref.phis[a.ID])
		if i < len(ref.in.Anchors) {
			an.Snippet = ref.in.Anchors[i].Snippet
		}
		for _, s := range an.Subgraphs {
			roots = append(roots, s.Root)
		}
		res.Anchors = append(res.Anchors, an)
	}
	if insp, ok := e.graph.(kg.Inspector); ok {
		if roots = uniq(roots); len(roots) > 0 {
			stmt, params := insp.SubgraphStatement(roots, e.Subgraph)
			res.Neo4j = &Statement{Cypher: stmt, Params: params}
		}
		res.Neo4jPaths = pathStatement(insp, res.Results)
	}
	e.persist(ctx, res)
	res.Fallbacks = e.trace.fallbacks // persisting may have added one
	return res, nil
}

// pathStatement is the Browser statement that draws the results' named
// paths; nil when they name none.
func pathStatement(insp kg.Inspector, results []Doc) *Statement {
	paths := drawnPaths(results)
	if len(paths) == 0 {
		return nil
	}
	stmt, params := insp.PathStatement(paths)
	return &Statement{Cypher: stmt, Params: params}
}

// explainAnchor is an anchor with the phi of each query subgraph and, while
// the structural path is on, its document subgraphs closest to G_Q.
func (e explainer) explainAnchor(a Doc, st structure, ap anchorPhi) Anchor {
	phis := []Phi{}
	for j, v := range ap.phi {
		q := st.qsubs[j].sg
		phis = append(phis, Phi{QID: q.Root, Label: q.Nodes[0].Label, Phi: v})
	}
	sgs := []api.Subgraph{}
	if st.on {
		for _, g := range rankDocSubgraphs(a, st, e.MaxAnchorSubgraphs) {
			sgs = append(sgs, APISubgraph(g))
		}
	}
	return Anchor{Doc: a, Phi: phis, PhiExact: ap.exact, Subgraphs: sgs}
}

// persist records the retrieval in the graph when the request asks for it.
func (e explainer) persist(ctx context.Context, res *Result) {
	if !e.Persist {
		return
	}
	rec, ok := e.graph.(kg.Recorder)
	if !ok {
		e.trace.fallback("persist_unsupported", "the configured graph backend cannot record retrievals (use Neo4j)")
		return
	}
	rr := kg.RetrievalRecord{ID: retrievalID(), Query: res.Query, Reformulated: res.ReformulatedQuery, At: time.Now().UTC()}
	for _, a := range res.Anchors {
		rr.Anchors = append(rr.Anchors, kg.AnchorRecord{DocID: a.ID, Title: a.Title, Rank: a.Rank, Score: a.Score, Entities: a.Entities})
	}
	if err := rec.RecordRetrieval(ctx, rr); err != nil {
		e.trace.fallback("persist_failed", "recording the retrieval failed: "+err.Error())
		return
	}
	res.RetrievalID = rr.ID
}

func retrievalID() string {
	return fmt.Sprintf("r-%d", time.Now().UnixNano())
}

// uniq drops repeated strings, keeping the first of each.
func uniq(xs []string) []string {
	seen := make(map[string]bool, len(xs))
	out := xs[:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
