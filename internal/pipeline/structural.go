package pipeline

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/vec"
)

// similarity picks the pairwise subgraph similarity of the utility's sim
// term: the Siamese GNN's cosine, or the GED heuristic (ablation, or no GNN
// configured, which is flagged while the structural path is on).
func (sr scorer) similarity(structOn bool) func(q, d *entry) float64 {
	useGNN := sr.Structure == "gnn"
	if useGNN && sr.gnn == nil {
		useGNN = false
		if structOn {
			sr.trace.fallback("gnn_unavailable", "no GNN model is configured; the GED heuristic scores structure")
		}
	}
	if useGNN {
		return func(a, b *entry) float64 { return float64(vec.Dot(a.emb, b.emb)) }
	}
	return func(a, b *entry) float64 { return scoring.GEDSimilarity(a.sg, b.sg) }
}

// gameBuilder builds the structural game of each document against G_Q. The
// players are G_Q's subgraphs over one universe of nodes; what documents
// share (node indices of a document subgraph, sim of a pair) is memoised.
type gameBuilder struct {
	st       structure
	lambda   float64
	universe map[string]int
	players  [][]int
	rootIdx  map[string][]int      // universe indices of a document subgraph's nodes
	simMemo  map[[2]string]float64 // (query root, doc root) -> sim
}

func newGameBuilder(st structure, lambda float64) *gameBuilder {
	b := &gameBuilder{st: st, lambda: lambda, universe: map[string]int{}, rootIdx: map[string][]int{}, simMemo: map[[2]string]float64{}}
	for _, q := range st.qsubs {
		var idx []int
		for _, n := range q.sg.Nodes {
			i, ok := b.universe[n.QID]
			if !ok {
				i = len(b.universe)
				b.universe[n.QID] = i
			}
			idx = append(idx, i)
		}
		b.players = append(b.players, idx)
	}
	return b
}

func (b *gameBuilder) game(doc retrieval.Document, subs map[string]*entry) *scoring.Game {
	inDoc := make([]bool, len(b.universe))
	best := make([]float64, len(b.players))
	for _, e := range doc.Entities {
		d, ok := subs[e]
		if !ok {
			continue
		}
		idx, ok := b.rootIdx[e]
		if !ok {
			for _, n := range d.sg.Nodes {
				if i, in := b.universe[n.QID]; in {
					idx = append(idx, i)
				}
			}
			b.rootIdx[e] = idx
		}
		for _, i := range idx {
			inDoc[i] = true
		}
		for j, q := range b.st.qsubs {
			key := [2]string{q.sg.Root, e}
			s, ok := b.simMemo[key]
			if !ok {
				s = b.st.sim(q, d)
				b.simMemo[key] = s
			}
			best[j] = math.Max(best[j], s) // best starts at 0: max(0, max_d sim)
		}
	}
	return scoring.NewGame(b.lambda, len(b.universe), b.players, inDoc, best)
}

// phi is the explanation of an anchor's game: exact by enumeration for small
// G_Q, Monte Carlo otherwise.
func (sr scorer) phi(ctx context.Context, g *scoring.Game, docID string) ([]float64, bool, error) {
	if g == nil {
		return nil, true, nil
	}
	if g.Players() <= scoring.MaxExactPlayers {
		return g.ShapleyExact(), true, nil
	}
	phi, err := g.ShapleyMonteCarlo(ctx, sr.Samples, scoring.NewRand(sr.Seed, "phi|"+docID))
	return phi, false, err
}

// rankDocSubgraphs orders a document's subgraphs by their best similarity to
// a query subgraph, then by root, and keeps the first keep.
func rankDocSubgraphs(doc Doc, st structure, keep int) []kg.Subgraph {
	type scored struct {
		sg kg.Subgraph
		s  float64
	}
	var list []scored
	for _, e := range doc.Entities {
		d, ok := st.subs[e]
		if !ok {
			continue
		}
		best := 0.0
		for _, q := range st.qsubs {
			best = math.Max(best, st.sim(q, d))
		}
		list = append(list, scored{d.sg, best})
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].s != list[j].s {
			return list[i].s > list[j].s
		}
		return list[i].sg.Root < list[j].sg.Root
	})
	out := []kg.Subgraph{}
	for i := 0; i < len(list) && i < keep; i++ {
		out = append(out, list[i].sg)
	}
	return out
}

// withinBudget refuses, before any scoring, a request whose structural work
// (phases 2 and 4, and the anchors' phi) would exceed the configured number
// of game evaluations: its cost is known once G_Q is, and a request that
// cannot fit is answered at once (422) instead of running into its timeout.
func (sr scorer) withinBudget(st structure, candidates int) error {
	if !st.on {
		return nil
	}
	players, docs := len(st.qsubs), candidates+sr.P
	var cost int64
	if sr.Shapley == "montecarlo" {
		cost = int64(docs) * scoring.MonteCarloEvaluations(players, sr.Samples)
	} else {
		cost = int64(docs) // one evaluation of F per document
	}
	if players > scoring.MaxExactPlayers { // the anchors' phi is estimated
		cost += int64(sr.M) * scoring.MonteCarloEvaluations(players, sr.Samples)
	} else {
		cost += int64(sr.M) * int64(players) << players
	}
	if limit := sr.maxEvals; cost > limit {
		return &errs.Error{Code: errs.Unprocessable, Field: "samples", Message: fmt.Sprintf(
			"the request needs %d Shapley game evaluations (%d query entities with subgraphs x %d samples x %d documents, shapley=%s), over this server's limit of %d: lower samples, n or p, use shapley=exact, or ask a shorter question",
			cost, players, sr.Samples, docs, sr.Shapley, limit)}
	}
	return nil
}
