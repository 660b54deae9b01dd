package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/kg"
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
	}
}

// explain assembles the answer and why: the results and anchors with the KG
// paths they name (paths.go), each anchor with its phi, snippet and closest
// document subgraphs, the Browser statements, and, when asked, the retrieval
// recorded in the graph.
func (r request) explain(ctx context.Context, sc scored, anchors []Doc, ref reformulated, fin reranked) (*Result, error) {
	res := r.result(sc.grounded)
	ix, err := r.namePaths(ctx, sc.relvec, sc.channels.kg, fin.st.qsubs, res.QueryEntities, fin.docs, anchors)
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
		an := r.explainAnchor(a, fin.st, ref.phis[a.ID])
		if i < len(ref.in.Anchors) {
			an.Snippet = ref.in.Anchors[i].Snippet
		}
		for _, s := range an.Subgraphs {
			roots = append(roots, s.Root)
		}
		res.Anchors = append(res.Anchors, an)
	}
	if insp, ok := r.p.cfg.Graph.(kg.Inspector); ok {
		if roots = uniq(roots); len(roots) > 0 {
			stmt, params := insp.SubgraphStatement(roots, r.opts.SubgraphParams())
			res.Neo4j = &Statement{Cypher: stmt, Params: params}
		}
		res.Neo4jPaths = pathStatement(insp, res.Results)
	}
	r.persist(ctx, res)
	res.Fallbacks = r.trace.fallbacks // persisting may have added one
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
func (r request) explainAnchor(a Doc, st structure, ap anchorPhi) Anchor {
	phis := []Phi{}
	for j, v := range ap.phi {
		q := st.qsubs[j].sg
		phis = append(phis, Phi{QID: q.Root, Label: q.Nodes[0].Label, Phi: v})
	}
	sgs := []api.Subgraph{}
	if st.on {
		for _, g := range rankDocSubgraphs(a, st, r.opts.MaxAnchorSubgraphs) {
			sgs = append(sgs, APISubgraph(g))
		}
	}
	return Anchor{Doc: a, Phi: phis, PhiExact: ap.exact, Subgraphs: sgs}
}

// persist records the retrieval in the graph when the request asks for it.
func (r request) persist(ctx context.Context, res *Result) {
	if !r.opts.Persist {
		return
	}
	rec, ok := r.p.cfg.Graph.(kg.Recorder)
	if !ok {
		r.trace.fallback("persist_unsupported", "the configured graph backend cannot record retrievals (use Neo4j)")
		return
	}
	rr := kg.RetrievalRecord{ID: retrievalID(), Query: res.Query, Reformulated: res.ReformulatedQuery, At: time.Now().UTC()}
	for _, a := range res.Anchors {
		rr.Anchors = append(rr.Anchors, kg.AnchorRecord{DocID: a.ID, Title: a.Title, Rank: a.Rank, Score: a.Score, Entities: a.Entities})
	}
	if err := rec.RecordRetrieval(ctx, rr); err != nil {
		r.trace.fallback("persist_failed", "recording the retrieval failed: "+err.Error())
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
