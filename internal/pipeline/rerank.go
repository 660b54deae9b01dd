package pipeline

import (
	"context"
	"time"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// reranked is phase 4's output: the top k, and the structural path as it
// ended (with the stage-2 documents' subgraphs, or off if fetching them
// failed).
type reranked struct {
	docs []Doc
	all  []Doc // every scored stage-2 candidate, in stage-2 order
	st   structure
}

// rerank is phase 4: the stage-2 candidates are scored against the ORIGINAL
// query Q, not Q', so that the reformulation widens the search without
// drifting from what was asked (fidelity control). Results say whether they
// were also stage-1 candidates or anchors.
func (pp paper) rerank(ctx context.Context, sc scored, anchors []Doc, second []retrieval.Hit) (reranked, error) {
	t := time.Now()
	st, err := pp.withSubgraphsOf(ctx, sc.st, second)
	if err != nil {
		return reranked{}, err
	}
	final, _, err := pp.score.scoreHits(ctx, st, sc.qvec, second, sc.channels, "second")
	if err != nil {
		return reranked{}, err
	}
	inFirst := map[string]bool{}
	for _, c := range sc.hits {
		inFirst[c.Doc.ID] = true
	}
	isAnchor := map[string]bool{}
	for _, a := range anchors {
		isAnchor[a.ID] = true
	}
	docs := []Doc{}
	for _, d := range topByScore(final, pp.K) {
		d.Breakdown.InFirst, d.Breakdown.Anchor = inFirst[d.ID], isAnchor[d.ID]
		docs = append(docs, d)
	}
	pp.trace.timed("rerank", t)
	return reranked{docs: docs, all: final, st: st}, nil
}

// withSubgraphsOf adds the subgraphs of the hits' entities that st lacks; a
// graph failure turns the structural path off.
func (pp paper) withSubgraphsOf(ctx context.Context, st structure, hits []retrieval.Hit) (structure, error) {
	if !st.on {
		return st, nil
	}
	var missing []string
	for _, h := range hits {
		for _, e := range h.Doc.Entities {
			if _, ok := st.subs[e]; !ok {
				missing = append(missing, e)
			}
		}
	}
	more, err := pp.score.subgraphs(ctx, missing)
	if err != nil {
		if ctx.Err() != nil {
			return st, ctx.Err()
		}
		st.on = false
		pp.trace.fallback("graph_unavailable", "subgraph extraction for the rerank failed, structural path off: "+err.Error())
	}
	subs := make(map[string]*entry, len(st.subs)+len(more))
	for k, v := range st.subs {
		subs[k] = v
	}
	for k, v := range more {
		subs[k] = v
	}
	st.subs = subs
	return st, nil
}
