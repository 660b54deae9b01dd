package pipeline

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// setSimilarity picks the pairwise subgraph similarity of the utility's sim
// term: the Siamese GNN's cosine, or the GED heuristic (ablation).
func (r *request) setSimilarity() {
	useGNN := r.opts.Structure == "gnn"
	if useGNN && r.p.cfg.GNN == nil {
		useGNN = false
		if r.structOn {
			r.fallback("gnn_unavailable", "no GNN model is configured; the GED heuristic scores structure")
		}
	}
	if useGNN {
		r.sim = func(a, b *entry) float64 { return float64(dot(a.emb, b.emb)) }
	} else {
		r.sim = func(a, b *entry) float64 { return scoring.GEDSimilarity(a.sg, b.sg) }
	}
}

func (r *request) usesGNN() bool { return r.opts.Structure == "gnn" && r.p.cfg.GNN != nil }

func (r *request) cacheKey(root string) string {
	o := r.opts
	model := "ged"
	if r.usesGNN() {
		model = r.p.cfg.GNN.Version()
	}
	return fmt.Sprintf("%s|%d|%d|%d|%s", root, o.Hops, o.MaxNodes, o.HubDegree, model)
}

// subgraphs returns the cached or freshly extracted (and encoded) subgraphs
// of roots: one batched graph call and one batched GNN call for the misses.
// Roots unknown to the graph are absent (and cached as such).
func (r *request) subgraphs(ctx context.Context, roots []string) (map[string]*entry, error) {
	out := map[string]*entry{}
	var miss []string
	seen := map[string]bool{}
	for _, q := range roots {
		if seen[q] {
			continue
		}
		seen[q] = true
		if e, ok := r.p.cache.Get(r.cacheKey(q)); ok {
			if m := r.p.cfg.Metrics; m != nil {
				m.Cache(true)
			}
			if e != nil && len(e.sg.Nodes) > 0 {
				out[q] = e
			}
			continue
		}
		if m := r.p.cfg.Metrics; m != nil {
			m.Cache(false)
		}
		miss = append(miss, q)
	}
	if len(miss) == 0 {
		return out, nil
	}
	sgs, err := r.p.cfg.Graph.Subgraphs(ctx, miss, r.opts.SubgraphParams())
	if err != nil {
		return nil, fmt.Errorf("subgraphs: %w", err)
	}
	var fresh []*entry
	var list []kg.Subgraph
	for _, q := range miss {
		sg, ok := sgs[q]
		if !ok {
			r.p.cache.Add(r.cacheKey(q), &entry{})
			continue
		}
		e := &entry{sg: sg}
		fresh = append(fresh, e)
		list = append(list, sg)
		out[q] = e
	}
	if r.usesGNN() && len(list) > 0 {
		embs, err := r.p.cfg.GNN.EncodeGraphs(ctx, list)
		if err != nil {
			return nil, fmt.Errorf("encode subgraphs: %w", err)
		}
		for i, e := range fresh {
			e.emb = embs[i]
		}
	}
	for _, e := range fresh {
		r.p.cache.Add(r.cacheKey(e.sg.Root), e)
	}
	return out, nil
}

// queryEntities fills the response's linked entities and G_Q.
func (r *request) queryEntities(ctx context.Context, ms []kg.Mention, subs map[string]*entry) error {
	qids := kg.QIDs(ms)
	ents, err := r.p.cfg.Graph.Entities(ctx, qids)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		ents = nil // labels are cosmetic here; linking already succeeded
	}
	for _, m := range ms {
		label := ents[m.QID].Label
		r.labels[m.QID] = label
		r.res.QueryEntities = append(r.res.QueryEntities, QueryEntity{QID: m.QID, Label: label, Surface: m.Surface, Start: m.Start, End: m.End})
	}
	for _, q := range qids {
		if e, ok := subs[q]; ok {
			r.qsubs = append(r.qsubs, e)
			r.res.QuerySubgraphs = append(r.res.QuerySubgraphs, e.sg)
		}
	}
	return nil
}

// docGame builds the structural game of one document against G_Q.
type gameBuilder struct {
	r        *request
	universe map[string]int
	players  [][]int
	rootIdx  map[string][]int      // universe indices of a document subgraph's nodes
	simMemo  map[[2]string]float64 // (query root, doc root) -> sim
}

func (r *request) newGameBuilder() *gameBuilder {
	b := &gameBuilder{r: r, universe: map[string]int{}, rootIdx: map[string][]int{}, simMemo: map[[2]string]float64{}}
	for _, q := range r.qsubs {
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
		for j, q := range b.r.qsubs {
			key := [2]string{q.sg.Root, e}
			s, ok := b.simMemo[key]
			if !ok {
				s = b.r.sim(q, d)
				b.simMemo[key] = s
			}
			best[j] = math.Max(best[j], s) // best starts at 0: max(0, max_d sim)
		}
	}
	return scoring.NewGame(b.r.opts.Lambda, len(b.universe), b.players, inDoc, best)
}

// score runs the dual-path evaluation over hits against the original query.
func (r *request) score(ctx context.Context, hits []retrieval.Hit, subs map[string]*entry, stage string) ([]Doc, []*scoring.Game, error) {
	n := len(hits)
	sem, ent := make([]float64, n), make([]float64, n)
	games := make([]*scoring.Game, n)
	dvecs := make([][]float32, n)
	missingVec := false
	for i, h := range hits {
		dvecs[i] = h.Doc.Vector
		if len(h.Doc.Vector) == 0 {
			missingVec = true
			continue
		}
		sem[i] = cosine(r.qvec, h.Doc.Vector)
	}
	if missingVec {
		r.fallback("missing_document_vectors", stage+" stage: some documents have no stored vector; their semantic score is 0")
	}
	if r.structOn {
		defer r.timed("structural", time.Now())
		var shapley time.Duration // the Shapley part alone: exact vs Monte Carlo
		b := r.newGameBuilder()
		for i, h := range hits {
			if i%16 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, nil, err
				}
			}
			g := b.game(h.Doc, subs)
			games[i] = g
			t := time.Now()
			if r.opts.Shapley == "montecarlo" {
				phi := g.ShapleyMonteCarlo(r.opts.Samples, scoring.NewRand(r.opts.Seed, stage+"|"+h.Doc.ID))
				ent[i] = mean(phi)
			} else {
				ent[i] = g.Ent()
			}
			shapley += time.Since(t)
		}
		r.res.TimingsMS["shapley"] += float64(shapley.Microseconds()) / 1000
	}
	zs, ze := scoring.ZScores(sem), scoring.ZScores(ent)
	weights, err := r.weights(ctx, dvecs)
	if err != nil {
		return nil, nil, err
	}
	out := make([]Doc, n)
	for i, h := range hits {
		w := weights[i]
		out[i] = Doc{
			ID: h.Doc.ID, Title: h.Doc.Title, Text: h.Doc.Text, Entities: h.Doc.Entities,
			Score: w[0]*zs[i] + w[1]*ze[i],
			Breakdown: Breakdown{
				Semantic: sem[i], Structural: ent[i], ZSemantic: zs[i], ZStructural: ze[i],
				Gate: Weights{Semantic: w[0], Structural: w[1]}, Stage: stage, SearchScore: h.Score, Explain: h.Explain,
			},
		}
	}
	return out, games, nil
}

// weights are the gate's per-document fusion weights, or [1, 0] when the
// structural branch is off (the adaptive fallback).
func (r *request) weights(ctx context.Context, dvecs [][]float32) ([][2]float64, error) {
	if !r.structOn {
		out := make([][2]float64, len(dvecs))
		for i := range out {
			out[i] = [2]float64{1, 0}
		}
		return out, nil
	}
	if r.opts.Gate == "learned" {
		if g := r.p.cfg.Gate; g != nil {
			ok := true
			for _, v := range dvecs {
				ok = ok && len(v) > 0
			}
			if ok {
				w, err := g.Weights(ctx, r.qvec, dvecs)
				if err != nil {
					return nil, fmt.Errorf("gate: %w", err)
				}
				return w, nil
			}
		}
		if !r.hasFallback("gate_unavailable") {
			r.fallback("gate_unavailable", fmt.Sprintf("no gate model is configured (or vectors are missing); fixed weights %.2f/%.2f", r.opts.FixedAlpha, 1-r.opts.FixedAlpha))
		}
	}
	return scoring.FixedGate{Semantic: r.opts.FixedAlpha}.Weights(ctx, r.qvec, dvecs)
}

func (r *request) hasFallback(name string) bool {
	for _, f := range r.res.Fallbacks {
		if f.Name == name {
			return true
		}
	}
	return false
}

// phi is the explanation of an anchor's game: exact by enumeration for small
// G_Q, Monte Carlo otherwise.
func (r *request) phi(g *scoring.Game, docID string) ([]float64, bool) {
	if g == nil {
		return nil, true
	}
	if g.Players() <= scoring.MaxExactPlayers {
		return g.ShapleyExact(), true
	}
	return g.ShapleyMonteCarlo(r.opts.Samples, scoring.NewRand(r.opts.Seed, "phi|"+docID)), false
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	na, nb := math.Sqrt(float64(dot(a, a))), math.Sqrt(float64(dot(b, b)))
	if na == 0 || nb == 0 {
		return 0
	}
	return float64(dot(a, b)) / (na * nb)
}

// rankDocSubgraphs orders an anchor's document subgraphs by their best
// similarity to a query subgraph, then by root.
func (r *request) rankDocSubgraphs(doc Doc, subs map[string]*entry) []kg.Subgraph {
	type scored struct {
		sg kg.Subgraph
		s  float64
	}
	var list []scored
	for _, e := range doc.Entities {
		d, ok := subs[e]
		if !ok {
			continue
		}
		best := 0.0
		for _, q := range r.qsubs {
			best = math.Max(best, r.sim(q, d))
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
	for i := 0; i < len(list) && i < r.opts.MaxAnchorSubgraphs; i++ {
		out = append(out, list[i].sg)
	}
	return out
}
