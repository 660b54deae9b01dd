package pipeline

import (
	"context"
	"fmt"
	"sort"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/reformulate"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// Question-aware reformulation (reform_rank question; beyond the paper,
// docs/method.md): the bridges are the same entities as the method's (the
// anchors' entities inside a query subgraph), but each is ranked by the
// question relevance of the best KG path from a query entity to it
// (pathrel, as the graph channel and the path utility score paths), not by
// the anchors' question-blind Shapley values, which give every neighbour of
// the same query entity the same weight. Relations are the relations on
// those paths, ranked by how well each matches the question. Shapley values
// only break ties (bridges reached by the same relation).

// questionTerms ranks the bridges (keys of phiOf, with their Shapley scores)
// and the relations on their best paths by question relevance. A bridge
// without a path from a query entity (a node reached only through a hub) is
// dropped.
func (r request) questionTerms(ctx context.Context, relvec []float32, qsubs []*entry, phiOf map[string]float64, labels map[string]string) (bridges, relations []reformulate.Term, err error) {
	best, err := r.bestPaths(ctx, relvec, qsubs)
	if err != nil {
		return nil, nil, err
	}
	type cand struct {
		id       string
		rel, phi float64
	}
	var cs []cand
	relScore := map[string]float64{}
	for id, phi := range phiOf {
		p, ok := best[id]
		if !ok {
			continue
		}
		cs = append(cs, cand{id, p.Relevance, phi})
		for _, st := range p.Steps {
			if st.Label == "" {
				continue
			}
			if v, ok := relScore[st.Label]; !ok || st.Relevance > v {
				relScore[st.Label] = st.Relevance
			}
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.rel != b.rel {
			return a.rel > b.rel
		}
		if a.phi != b.phi {
			return a.phi > b.phi
		}
		return a.id < b.id
	})
	for _, c := range cs {
		bridges = append(bridges, reformulate.Term{Text: labels[c.id], Score: c.rel})
	}
	return bridges, rankTerms(relScore, nil), nil
}

// bestPaths is, for every entity of G_Q but the query entities, its most
// question-relevant path from a query entity inside that entity's subgraph
// (1 hop, or 2 when hops >= 2; the request's relation texts and prior).
func (r request) bestPaths(ctx context.Context, relvec []float32, qsubs []*entry) (map[string]pathrel.Path, error) {
	prior, err := r.stepPrior(ctx, relvec)
	if err != nil {
		return nil, err
	}
	roots := make([]string, len(qsubs))
	subs := make(map[string]kg.Subgraph, len(qsubs))
	for i, q := range qsubs {
		roots[i], subs[q.sg.Root] = q.sg.Root, q.sg
	}
	paths, err := r.p.relations(r.opts.GraphRelations == "directed").Reach(ctx, relvec, pathrel.Mentioned(roots...), subs, min(r.opts.Hops, 2), prior)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("reformulation path relevance: %w", err)
	}
	best := make(map[string]pathrel.Path, len(paths))
	for _, p := range paths {
		best[p.Entity] = p
	}
	return best, nil
}
