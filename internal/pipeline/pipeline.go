// Package pipeline runs DMAR's four phases (DMAR-SPEC.md): BM25 recall,
// dual-path anchor scoring, anchor-guided reformulation with a second search
// over the whole corpus, and fidelity-controlled reranking against the
// original query. It declares what it consumes; cmd/dmar wires backends in.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/reformulate"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// Reformulator produces Q' from the query and its anchors.
type Reformulator interface {
	Reformulate(ctx context.Context, in reformulate.Input) (string, error)
}

// Metrics receives the pipeline's measurements; nil is allowed.
type Metrics interface {
	Stage(name string, d time.Duration)
	Fallback(name string)
	Cache(hit bool)
}

// Config holds a pipeline's parts.
type Config struct {
	Graph   kg.Graph
	Index   retrieval.Index
	Encoder scoring.Encoder
	GNN     scoring.GraphEncoder // nil: structure "gnn" falls back to "ged"
	Gate    scoring.Gate         // learned gate; nil: the fixed gate
	Chat    Reformulator         // nil: reformulator "chat" falls back to builtin
	Metrics Metrics
	Logger  *slog.Logger
	// CacheSize bounds the subgraph/embedding cache (entries); CacheTTL lets
	// a changing graph (Neo4j) be seen again.
	CacheSize int
	CacheTTL  time.Duration
	Defaults  *Options // nil: Defaults()
}

// Pipeline is safe for concurrent use.
type Pipeline struct {
	cfg      Config
	builtin  reformulate.Builtin
	cache    *expirable.LRU[string, *entry]
	defaults Options
}

// entry is a cached subgraph and its GNN embedding.
type entry struct {
	sg  kg.Subgraph
	emb []float32
}

// New checks cfg and returns a pipeline.
func New(cfg Config) (*Pipeline, error) {
	if cfg.Graph == nil || cfg.Index == nil || cfg.Encoder == nil {
		return nil, errors.New("pipeline: a graph, an index and an encoder are required")
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = 50_000
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = 30 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	d := Defaults()
	if cfg.Defaults != nil {
		d = *cfg.Defaults
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("pipeline: default options: %w", err)
	}
	return &Pipeline{cfg: cfg, cache: expirable.NewLRU[string, *entry](cfg.CacheSize, nil, cfg.CacheTTL), defaults: d}, nil
}

// Defaults returns the options requests start from.
func (p *Pipeline) Defaults() Options { return p.defaults }

// Graph returns the configured graph (for the API's link and subgraph routes).
func (p *Pipeline) Graph() kg.Graph { return p.cfg.Graph }

// Index returns the configured search index.
func (p *Pipeline) Index() retrieval.Index { return p.cfg.Index }

// Encoder returns the configured sentence encoder.
func (p *Pipeline) Encoder() scoring.Encoder { return p.cfg.Encoder }

// MaxQueryChars bounds the query length.
const MaxQueryChars = 2000

// request is the state of one retrieval.
type request struct {
	p        *Pipeline
	opts     Options
	res      *Result
	qvec     []float32
	qsubs    []*entry // G_Q, in query-entity order
	structOn bool
	sim      func(q, d *entry) float64
	labels   map[string]string
	phis     map[string]anchorPhi
	// candidates are the scored stage-1 documents; stopAfterScoring ends the
	// run there (Candidates, for training and studying the gate).
	candidates       []Doc
	stopAfterScoring bool
}

func (r *request) fallback(name, reason string) {
	r.res.Fallbacks = append(r.res.Fallbacks, Fallback{Name: name, Reason: reason})
	if m := r.p.cfg.Metrics; m != nil {
		m.Fallback(name)
	}
}

func (r *request) timed(name string, start time.Time) {
	d := time.Since(start)
	r.res.TimingsMS[name] += float64(d.Microseconds()) / 1000
	if m := r.p.cfg.Metrics; m != nil {
		m.Stage(name, d)
	}
}

// Retrieve runs DMAR for query with opts (start from Defaults()).
func (p *Pipeline) Retrieve(ctx context.Context, query string, opts Options) (*Result, error) {
	begin := time.Now()
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, errs.Field("query", "must not be empty")
	}
	if n := len([]rune(query)); n > MaxQueryChars {
		return nil, &errs.Error{Code: errs.TooLarge, Field: "query", Message: fmt.Sprintf("query: %d characters, the limit is %d", n, MaxQueryChars)}
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	r := &request{p: p, opts: opts, labels: map[string]string{}, res: &Result{
		Query: query, Options: opts, TimingsMS: map[string]float64{}, Fallbacks: []Fallback{},
		Results: []Doc{}, Anchors: []Anchor{}, QueryEntities: []QueryEntity{}, QuerySubgraphs: []kg.Subgraph{},
	}}
	if err := r.run(ctx, query); err != nil {
		return nil, err
	}
	r.res.TimingsMS["total"] = float64(time.Since(begin).Microseconds()) / 1000
	return r.res, nil
}

func (r *request) run(ctx context.Context, query string) error {
	p, o := r.p, r.opts

	// Encode Q and link it.
	t := time.Now()
	vecs, err := p.cfg.Encoder.Encode(ctx, []string{query})
	if err != nil {
		return fmt.Errorf("encode query: %w", err)
	}
	r.qvec = vecs[0]
	r.timed("encode", t)

	t = time.Now()
	r.structOn = o.Structure != "off"
	if !r.structOn {
		r.fallback("structure_off", "the request turned the structural path off (semantic only)")
	}
	var mentions []kg.Mention
	if r.structOn {
		mentions, err = p.cfg.Graph.Link(ctx, query)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.structOn = false
			r.fallback("graph_unavailable", "linking failed, structural path off: "+err.Error())
		}
	}
	r.timed("link", t)
	r.setSimilarity()

	// Phase 1: recall.
	t = time.Now()
	q1 := retrieval.Query{Mode: retrieval.BM25, Text: query, Limit: o.N, Filter: o.Filter, WithVectors: true}
	if o.Stage1 == "hybrid" {
		q1.Mode, q1.Vector, q1.Alpha, q1.Fusion = retrieval.Hybrid, r.qvec, o.Stage1Alpha, o.Fusion
	}
	cands, err := p.cfg.Index.Search(ctx, q1)
	if err != nil {
		return fmt.Errorf("stage 1 search: %w", err)
	}
	r.timed("recall", t)

	// Query subgraphs, together with the candidates' (one batched fetch).
	t = time.Now()
	qids := kg.QIDs(mentions)
	docEnts := map[string]*entry{}
	if r.structOn {
		roots := append(append([]string(nil), qids...), entitiesOf(cands)...)
		docEnts, err = r.subgraphs(ctx, roots)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.structOn = false
			r.fallback("graph_unavailable", "subgraph extraction failed, structural path off: "+err.Error())
		}
	}
	if err := r.queryEntities(ctx, mentions, docEnts); err != nil {
		return err
	}
	if r.structOn && len(r.qsubs) == 0 {
		r.structOn = false
		r.fallback("no_query_entities", "the query links to no entity with a subgraph; structural branch off (alpha=1, beta=0)")
	}
	r.timed("subgraphs", t)

	// Phase 2: dual-path scoring and anchors.
	t = time.Now()
	first, games, err := r.score(ctx, cands, docEnts, "first")
	if err != nil {
		return err
	}
	r.candidates = first
	if r.stopAfterScoring {
		return nil
	}
	anchors := topByScore(first, o.M)
	r.timed("anchor_scoring", t)

	// Phase 3: reformulation and second-stage search over the whole corpus.
	t = time.Now()
	in := r.reformInput(ctx, anchors, cands, games, docEnts)
	r.res.ReformulatedQuery, r.res.Reformulator = r.reformulate(ctx, in)
	r.timed("reformulate", t)

	t = time.Now()
	q2 := retrieval.Query{Mode: retrieval.Vector, Limit: o.P, Filter: o.Filter, WithVectors: true, Text: r.res.ReformulatedQuery}
	q2vec := r.qvec
	if r.res.ReformulatedQuery != query {
		v, err := p.cfg.Encoder.Encode(ctx, []string{r.res.ReformulatedQuery})
		if err != nil {
			return fmt.Errorf("encode reformulated query: %w", err)
		}
		q2vec = v[0]
	}
	q2.Vector = q2vec
	if o.Stage2 == "hybrid" {
		q2.Mode, q2.Alpha, q2.Fusion = retrieval.Hybrid, o.Stage2Alpha, o.Fusion
	}
	second, err := p.cfg.Index.Search(ctx, q2)
	if err != nil {
		return fmt.Errorf("stage 2 search: %w", err)
	}
	r.timed("second_stage", t)

	// Phase 4: fidelity-controlled reranking against the original query.
	t = time.Now()
	if r.structOn {
		var missing []string
		for _, h := range second {
			for _, e := range h.Doc.Entities {
				if _, ok := docEnts[e]; !ok {
					missing = append(missing, e)
				}
			}
		}
		more, err := r.subgraphs(ctx, missing)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.structOn = false
			r.fallback("graph_unavailable", "subgraph extraction for the rerank failed, structural path off: "+err.Error())
		}
		for k, v := range more {
			docEnts[k] = v
		}
	}
	final, _, err := r.score(ctx, second, docEnts, "second")
	if err != nil {
		return err
	}
	inFirst := map[string]bool{}
	for _, c := range cands {
		inFirst[c.Doc.ID] = true
	}
	isAnchor := map[string]bool{}
	for _, a := range anchors {
		isAnchor[a.ID] = true
	}
	for _, d := range topByScore(final, o.K) {
		d.Breakdown.InFirst, d.Breakdown.Anchor = inFirst[d.ID], isAnchor[d.ID]
		r.res.Results = append(r.res.Results, d)
	}
	r.timed("rerank", t)

	r.explainAnchors(anchors, games, docEnts, in)
	r.persist(ctx)
	return nil
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

// Candidates runs phases 1 and 2 only and returns every stage-1 candidate
// with its score breakdown (semantic and structural scores, their z-scores,
// the gate's weights), in stage-1 order. It is what the gate is trained on.
func (p *Pipeline) Candidates(ctx context.Context, query string, opts Options) ([]Doc, *Result, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, nil, errs.Field("query", "must not be empty")
	}
	if err := opts.Validate(); err != nil {
		return nil, nil, err
	}
	r := &request{p: p, opts: opts, labels: map[string]string{}, stopAfterScoring: true, res: &Result{
		Query: query, Options: opts, TimingsMS: map[string]float64{}, Fallbacks: []Fallback{},
		Results: []Doc{}, Anchors: []Anchor{}, QueryEntities: []QueryEntity{}, QuerySubgraphs: []kg.Subgraph{},
	}}
	if err := r.run(ctx, query); err != nil {
		return nil, nil, err
	}
	return r.candidates, r.res, nil
}
