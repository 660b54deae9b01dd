package pipeline

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/vec"
)

// scorer is phase 2's stage, dual-path scoring (this file, structural.go,
// evidence.go, and the subgraph cache, cache.go): candidates scored against
// Q on the semantic and the structural path, the gate's weights, the
// channels' scores fused in. It reads its models, the graph and the cache,
// its own options, and the fusion it is given; of the request, only the
// trace and the evidence log.
type scorer struct {
	graph     kg.Graph
	gnn       scoring.GraphEncoder
	gateModel scoring.Gate
	evGate    scoring.EvidenceGate
	cache     *expirable.LRU[string, *entry]
	metrics   Metrics
	maxEvals  int64 // Config.MaxShapleyEvaluations
	fuse      fusion
	trace     *trace
	evlog     *evidenceLog // nil: not collected
	scoreOptions
}

// scoreOptions are the scoring stage's options (docs/method.md, phase 2).
type scoreOptions struct {
	Structure  string            // gnn | ged | off
	Subgraph   kg.SubgraphParams // the subgraphs' radius h, N_max and hub cap
	Lambda     float64           // coverage vs GNN similarity in F
	Shapley    string            // exact | montecarlo
	Samples    int               // Monte Carlo trials T per player
	Seed       uint64
	Gate       string  // learned | fixed | evidence
	FixedAlpha float64 // semantic weight of the fixed gate
	M, P       int     // anchors and stage-2 candidates: the structural work's budget
}

func (o scoreOptions) validate() error {
	for _, err := range []error{
		ValidateSubgraph(o.Subgraph),
		errs.Unit("lambda", o.Lambda),
		errs.OneOf("shapley", o.Shapley, "exact", "montecarlo"),
		errs.IntIn("samples", o.Samples, 1, 10_000),
		errs.OneOf("gate", o.Gate, "learned", "fixed", "evidence"),
		errs.Unit("fixed_alpha", o.FixedAlpha),
		errs.OneOf("structure", o.Structure, "gnn", "ged", "off"),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// scoreOptions are the scoring stage's settings in o.
func (o Options) scoreOptions() scoreOptions {
	return scoreOptions{Structure: o.Structure, Subgraph: o.SubgraphParams(), Lambda: o.Lambda, Shapley: o.Shapley, Samples: o.Samples,
		Seed: o.Seed, Gate: o.Gate, FixedAlpha: o.FixedAlpha, M: o.M, P: o.P}
}

// scorer is the request's scoring stage; evlog collects its evidence
// (nil: not collected).
func (r request) scorer(evlog *evidenceLog) scorer {
	p, o, tr := r.p, r.opts, r.trace
	return scorer{graph: p.cfg.Graph, gnn: p.cfg.GNN, gateModel: p.cfg.Gate, evGate: p.cfg.EvidenceGate, cache: p.cache,
		metrics: p.cfg.Metrics, maxEvals: p.cfg.MaxShapleyEvaluations, fuse: o.fusion(), trace: tr, evlog: evlog, scoreOptions: o.scoreOptions()}
}

// structure is the structural path of one request: whether it is on, G_Q,
// the subgraphs of the documents' entities, and the pairwise subgraph
// similarity of the utility's sim term.
type structure struct {
	on    bool
	qsubs []*entry          // G_Q, in query-entity order
	subs  map[string]*entry // subgraphs by root, the query's and the documents'
	sim   func(q, d *entry) float64
	// conf is the link confidence of each query entity (linkConfidence),
	// for the evidence-aware gate.
	conf map[string]float64
}

// grounded is Q on the graph: G_Q, the candidates' subgraphs and the
// labelled query entities.
type grounded struct {
	recalled
	st       structure
	entities []QueryEntity
	// ents are the query entities and the nodes of their subgraphs (labels
	// and aliases), from the request's one Graph.Entities call.
	ents map[string]kg.Entity
}

// scored is phase 2's output: every candidate with its dual-path score, and
// its structural game (nil with the path off) for the anchors' explanation.
type scored struct {
	grounded
	docs  []Doc // in stage-1 order
	games []*scoring.Game
	start time.Time // scoring began: anchor selection closes "anchor_scoring"
}

// ground extracts G_Q together with the candidates' subgraphs (one batched
// fetch) and labels the query entities. A graph failure, or a query without
// an entity that has a subgraph, turns the structural path off.
func (sr scorer) ground(ctx context.Context, rec recalled) (grounded, error) {
	g := grounded{recalled: rec, st: structure{on: rec.structOn, sim: rec.sim, conf: linkConfidence(rec.mentions)}}
	t := time.Now()
	qids := kg.QIDs(rec.mentions)
	g.st.subs = map[string]*entry{}
	if g.st.on {
		roots := append(append([]string(nil), qids...), entitiesOf(rec.hits)...)
		subs, err := sr.subgraphs(ctx, roots)
		if err != nil {
			if ctx.Err() != nil {
				return g, ctx.Err()
			}
			g.st.on = false
			sr.trace.fallback("graph_unavailable", "subgraph extraction failed, structural path off: "+err.Error())
		}
		g.st.subs = subs
	}
	for _, q := range qids {
		if e, ok := g.st.subs[q]; ok {
			g.st.qsubs = append(g.st.qsubs, e)
		}
	}
	ents, err := sr.graph.Entities(ctx, entityIDs(qids, g.st.qsubs))
	if err != nil {
		if ctx.Err() != nil {
			return g, ctx.Err()
		}
		ents = nil // labels and aliases are cosmetic here; linking already succeeded
	}
	g.ents, g.entities = ents, queryEntities(rec.mentions, ents)
	if g.st.on && len(g.st.qsubs) == 0 {
		g.st.on = false
		sr.trace.fallback("no_query_entities", "the query links to no entity with a subgraph; structural branch off (alpha=1, beta=0)")
	}
	if rec.structOn {
		sr.trace.timed("subgraphs", t) // with the path off, only the labels were read
	}
	return g, nil
}

// entityIDs are the query entities and the nodes of G_Q, once each: every
// entity whose label or aliases the request shows or searches snippets for.
func entityIDs(qids []string, qsubs []*entry) []string {
	seen := map[string]bool{}
	var out []string
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, q := range qids {
		add(q)
	}
	for _, q := range qsubs {
		for _, n := range q.sg.Nodes {
			add(n.QID)
		}
	}
	return out
}

// score is phase 2 up to the anchors: Q and the candidates on the graph
// (ground), then the dual-path evaluation of every candidate against Q.
func (sr scorer) score(ctx context.Context, rec recalled) (scored, error) {
	g, err := sr.ground(ctx, rec)
	if err != nil {
		return scored{}, err
	}
	if err := sr.withinBudget(g.st, len(g.hits)); err != nil {
		return scored{}, err
	}
	start := time.Now()
	docs, games, err := sr.scoreHits(ctx, g.st, g.qvec, g.hits, g.channels, "first")
	if err != nil {
		return scored{}, err
	}
	return scored{grounded: g, docs: docs, games: games, start: start}, nil
}

// anchors are the m best-scored candidates.
func (sr scorer) anchors(sc scored) []Doc {
	a := topByScore(sc.docs, sr.M)
	sr.trace.timed("anchor_scoring", sc.start)
	return a
}

// scoreHits is the dual-path evaluation of hits against the original query
// (both phases 2 and 4): the semantic score cos(enc(Q), enc(D)) and the
// structural ent(D), the mean Shapley value of G_Q's subgraphs in D's game,
// z-normalised over hits and fused with the gate's weights, plus the
// channels' scores of the documents they reached.
func (sr scorer) scoreHits(ctx context.Context, st structure, qvec []float32, hits []retrieval.Hit, ch channels, stage string) ([]Doc, []*scoring.Game, error) {
	n := len(hits)
	sem, dvecs := sr.semantic(qvec, hits, stage)
	ent, games := make([]float64, n), make([]*scoring.Game, n)
	if st.on {
		defer sr.trace.timed("structural", time.Now())
		var err error
		if ent, games, err = sr.structural(ctx, st, hits, stage); err != nil {
			return nil, nil, err
		}
	}
	if st.on {
		sr.trace.entSpread(stage, ent)
	}
	zs, ze := scoring.ZScores(sem), scoring.ZScores(ent)
	var ev []scoring.Evidence
	if st.on && (sr.Gate == "evidence" || sr.evlog != nil) {
		ev = sr.evidence(st, hits, ch, sem, ent, zs, ze)
	}
	weights, err := sr.weights(ctx, st.on, qvec, dvecs, ev)
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
	sr.fuse.fuse(out, ch)
	sr.record(stage, out, ch, ev)
	return out, games, nil
}

// semantic is each hit's cosine to enc(Q) (0 without a stored vector, which
// is flagged), and the hits' vectors for the gate.
func (sr scorer) semantic(qvec []float32, hits []retrieval.Hit, stage string) ([]float64, [][]float32) {
	sem, dvecs := make([]float64, len(hits)), make([][]float32, len(hits))
	missingVec := false
	qc := vec.NewCosiner(qvec) // Cosine's values, bit for bit, with enc(Q)'s norm worked out once
	for i, h := range hits {
		dvecs[i] = h.Doc.Vector
		if len(h.Doc.Vector) == 0 {
			missingVec = true
			continue
		}
		sem[i] = qc.Cosine(h.Doc.Vector)
	}
	if missingVec {
		sr.trace.fallback("missing_document_vectors", stage+" stage: some documents have no stored vector; their semantic score is 0")
	}
	return sem, dvecs
}

// structural is each hit's ent(D) and game: exact, or a Monte Carlo
// estimate seeded per stage and document. It times the Shapley part alone
// (exact vs Monte Carlo).
func (sr scorer) structural(ctx context.Context, st structure, hits []retrieval.Hit, stage string) ([]float64, []*scoring.Game, error) {
	ent, games := make([]float64, len(hits)), make([]*scoring.Game, len(hits))
	var shapley time.Duration
	b := newGameBuilder(st, sr.Lambda)
	for i, h := range hits {
		// Each document's game costs up to |G_Q| x its subgraphs similarity
		// look-ups (and, in Monte Carlo mode, 2 x |G_Q| x T evaluations):
		// check the deadline before every one.
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		g := b.game(h.Doc, st.subs)
		games[i] = g
		t := time.Now()
		if sr.Shapley == "montecarlo" {
			phi, err := g.ShapleyMonteCarlo(ctx, sr.Samples, scoring.NewRand(sr.Seed, stage+"|"+h.Doc.ID))
			if err != nil {
				return nil, nil, err
			}
			ent[i] = vec.Mean(phi)
		} else {
			ent[i] = g.Ent()
		}
		shapley += time.Since(t)
	}
	sr.trace.Add("shapley", shapley)
	return ent, games, nil
}

// weights are the gate's per-document fusion weights, or [1, 0] when the
// structural branch is off (the adaptive fallback). ev is each document's
// evidence, for gate=evidence.
func (sr scorer) weights(ctx context.Context, structOn bool, qvec []float32, dvecs [][]float32, ev []scoring.Evidence) ([][2]float64, error) {
	if !structOn {
		out := make([][2]float64, len(dvecs))
		for i := range out {
			out[i] = [2]float64{1, 0}
		}
		return out, nil
	}
	if sr.Gate == "evidence" {
		if w, ok, err := sr.evidenceWeights(ctx, ev); ok || err != nil {
			return w, err
		}
	}
	if sr.Gate == "learned" {
		if g := sr.gateModel; g != nil {
			ok := true
			for _, v := range dvecs {
				ok = ok && len(v) > 0
			}
			if ok {
				w, err := g.Weights(ctx, qvec, dvecs)
				if err != nil {
					return nil, fmt.Errorf("gate: %w", err)
				}
				return w, nil
			}
		}
		if !sr.trace.HasFallback("gate_unavailable") {
			sr.trace.fallback("gate_unavailable", fmt.Sprintf("no gate model is configured (or vectors are missing); fixed weights %.2f/%.2f", sr.FixedAlpha, 1-sr.FixedAlpha))
		}
	}
	return scoring.FixedGate{Semantic: sr.FixedAlpha}.Weights(ctx, qvec, dvecs)
}

func entitiesOf(hs []retrieval.Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Doc.Entities...)
	}
	return out
}

// topByScore sorts by score (descending), ties by document ID, keeps n, and
// numbers the ranks.
func topByScore(ds []Doc, n int) []Doc {
	s := append([]Doc(nil), ds...)
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Score != s[j].Score {
			return s[i].Score > s[j].Score
		}
		return s[i].ID < s[j].ID
	})
	if len(s) > n {
		s = s[:n]
	}
	for i := range s {
		s[i].Rank = i + 1
	}
	return s
}
