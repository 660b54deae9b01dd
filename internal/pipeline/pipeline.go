// Package pipeline runs DMAR (docs/method.md) as one-way stages, each a
// small type with its own options that takes the previous stage's output
// and returns its own (docs/architecture.md):
//
//  1. link (linker: question.go, linkfilter.go): Q encoded and linked;
//     recall (recaller: recall.go): BM25 (or hybrid) recall of n candidates,
//     joined by the channels' candidates (channel.go: the Channel interface,
//     implemented by the KG's graph channel, package kgchan, and the text
//     graph channel, package textchan; beyond the paper);
//  2. dual-path scoring (scorer: score.go, structural.go, evidence.go, with
//     the subgraph/embedding cache, cache.go) of the candidates against Q,
//     semantic and structural (the Shapley value of Q's entity subgraphs in
//     each document's game), the channels' scores fused in (fusion.go), and
//     selection of the m best as anchors;
//  3. the paper's phases past scoring (paper: paper.go): anchor-guided
//     reformulation of Q into Q' (reform.go), a second search for Q' over
//     the whole corpus (second.go), and
//  4. fidelity-controlled reranking of its candidates against the ORIGINAL
//     query (rerank.go);
//
// then the learned final ranking (finalRanker: finalrank.go, titlelinks.go)
// and the explanation (explainer: explain.go, paths.go). Retrieve chains
// them. The package declares what it consumes; cmd/dmar wires backends in.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/mentions"
	"github.com/dmar-kg/dmar/internal/reformulate"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
	"github.com/dmar-kg/dmar/internal/textgraph"
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
	// RelationEncoder embeds the relation texts and the question that path
	// relevance compares (and the relation prior reads); nil or Encoder:
	// Encoder. Path relevance's constants (pathrel.TwoHopPenalty, ViaBonus)
	// are cosines of one model, all-MiniLM-L6-v2: a retrieval encoder that
	// is better at documents is not better at matching a question to
	// "place of birth", so the two are configured apart (docs/encoders.md).
	RelationEncoder scoring.Encoder
	// Questions, with a RelationEncoder of its own, encodes Q once: enc(Q)
	// and, projected from the same model call, Q and its masked question
	// under the relation encoder; nil: the relation encoder encodes them.
	Questions scoring.QuestionEncoder
	GNN       scoring.GraphEncoder // nil: structure "gnn" falls back to "ged"
	// Ranker is the learned ranker of the final pool (option final_rank
	// learned); nil: the fused score plus the graph boost.
	Ranker scoring.Ranker
	Gate   scoring.Gate // learned gate; nil: the fixed gate
	// EvidenceGate is the evidence-aware gate (option gate=evidence); nil:
	// the fixed gate.
	EvidenceGate scoring.EvidenceGate
	// Mentions is the documents' mention index: the graph channel reaches
	// the documents that mention a reached entity through it
	// (graph_mentions); nil: only the entities' own pages.
	Mentions mentions.Reader
	// TextGraph is the graph built from the corpus's text, which the text
	// channel walks (text_graph); nil: the channel answers
	// text_graph_unavailable.
	TextGraph textgraph.Store
	// RelPrior is the learned question -> relation prior (option
	// path_prior); nil: path relevance is the cosine alone.
	RelPrior pathrel.Prior
	Chat     Reformulator // nil: reformulator "chat" falls back to builtin
	// SpeculateChannel: Graph and Index are in process, and the graph
	// channel reads the linked entities' documents while stage 1 searches,
	// before it knows whether stage 1 adds roots (kgchan.Channel.Speculate):
	// a read wasted costs CPU only, not a round trip.
	SpeculateChannel bool
	Metrics          Metrics
	Logger           *slog.Logger
	// CacheSize bounds the subgraph/embedding cache (entries); CacheTTL lets
	// a changing graph (Neo4j) be seen again.
	CacheSize int
	CacheTTL  time.Duration
	Defaults  *Options // nil: Defaults()
	// Method, when set (dmar or paper), starts the defaults over from that
	// method (Options.WithMethod).
	Method string
	// MaxShapleyEvaluations bounds the structural work one request may ask
	// for, in game evaluations (query subgraphs x samples x documents in
	// Monte Carlo mode); a request over it is refused with 422 before the
	// work starts. 0: DefaultMaxShapleyEvaluations.
	MaxShapleyEvaluations int64
}

// DefaultMaxShapleyEvaluations is a few CPU-seconds of game evaluations:
// far above any default request, far below a hostile one
// (docs/operations.md, Security, "Time and cost of a request").
const DefaultMaxShapleyEvaluations = 20_000_000

// Pipeline is safe for concurrent use.
type Pipeline struct {
	cfg      Config
	cache    *expirable.LRU[string, *entry]
	defaults Options
	// relation-text embeddings of the graph channel, plain and directed
	relsPlain, relsDirected *pathrel.Relations
	// pathPrior weighs RelPrior's score added to each step's cosine in path
	// relevance; 0: off (WithPathPrior)
	pathPrior float64
}

// MaxPathPrior bounds the relation prior's weight.
const MaxPathPrior = 5.0

// WithPathPrior is p composed with the learned question -> relation prior
// (Config.RelPrior) weighted by w in path relevance: dmar eval's -pX
// variants. The method leaves it out (it lowered the graph channel's recall
// on kgqa dev: docs/method.md), so no request can ask for it. The copy
// shares p's cache and relation embeddings.
func (p *Pipeline) WithPathPrior(w float64) (*Pipeline, error) {
	if !(w >= 0 && w <= MaxPathPrior) {
		return nil, errs.Field("path_prior", "must be between 0 and %v, got %v", MaxPathPrior, w)
	}
	q := *p
	q.pathPrior = w
	return &q, nil
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
	if cfg.MaxShapleyEvaluations <= 0 {
		cfg.MaxShapleyEvaluations = DefaultMaxShapleyEvaluations
	}
	d := Defaults()
	if cfg.Defaults != nil {
		d = *cfg.Defaults
	}
	if cfg.Method != "" {
		var err error
		if d, err = d.WithMethod(cfg.Method); err != nil {
			return nil, fmt.Errorf("pipeline: %w", err)
		}
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("pipeline: default options: %w", err)
	}
	rel := cfg.RelationEncoder
	if rel == nil || rel == cfg.Encoder {
		rel, cfg.RelationEncoder = cfg.Encoder, nil
	}
	return &Pipeline{cfg: cfg, cache: expirable.NewLRU[string, *entry](cfg.CacheSize, nil, cfg.CacheTTL), defaults: d,
		relsPlain: pathrel.NewRelations(rel, false), relsDirected: pathrel.NewRelations(rel, true)}, nil
}

// Defaults returns the options requests start from.
func (p *Pipeline) Defaults() Options { return p.defaults }

// Graph returns the configured graph (for the API's subgraph route).
func (p *Pipeline) Graph() kg.Graph { return p.cfg.Graph }

// Index returns the configured search index.
func (p *Pipeline) Index() retrieval.Index { return p.cfg.Index }

// Encoder returns the configured sentence encoder.
func (p *Pipeline) Encoder() scoring.Encoder { return p.cfg.Encoder }

// RelationEncoder is the encoder of the relation texts and the question
// path relevance compares with them (Config.RelationEncoder, or Encoder).
func (p *Pipeline) RelationEncoder() scoring.Encoder { return p.relationEncoder() }

// MaxQueryChars bounds the query length.
const MaxQueryChars = 2000

// Retrieve runs DMAR for query with opts (start from Defaults()).
func (p *Pipeline) Retrieve(ctx context.Context, query string, opts Options) (*Result, error) {
	return p.retrieveLogged(ctx, query, opts, nil, nil)
}

// retrieveLogged is Retrieve, collecting the scored candidates' evidence in
// evlog and the final pool's ranker inputs in ranklog when they are not nil.
func (p *Pipeline) retrieveLogged(ctx context.Context, query string, opts Options, evlog *evidenceLog, ranklog *rankLog) (*Result, error) {
	begin := time.Now()
	query, err := cleanQuery(query)
	if err != nil {
		return nil, err
	}
	if n := len([]rune(query)); n > MaxQueryChars {
		return nil, &errs.Error{Code: errs.TooLarge, Field: "query", Message: fmt.Sprintf("query: %d characters, the limit is %d", n, MaxQueryChars)}
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	// The request's searches may reuse one another's sub-searches (stage 2
	// repeats stage 1's vector scan under stage2_vector question).
	ctx = retrieval.WithSearchMemo(ctx)
	r := p.newRequest(query, opts)

	// Phase 1: recall n candidates for Q.
	rec, err := r.recaller().recall(ctx)
	if err != nil {
		return nil, err
	}
	// Phase 2: score them on both paths; the m best are the anchors.
	score := r.scorer(evlog)
	sc, err := score.score(ctx, rec)
	if err != nil {
		return nil, err
	}
	anchors := score.anchors(sc)
	// Phases 3 and 4, the paper's: reformulation, second search, rerank.
	ref, second, fin, err := r.paper(score).anchorsGuided(ctx, rec, sc, anchors)
	if err != nil {
		return nil, err
	}
	// The learned final ranking (final_rank learned) orders every candidate
	// the request found.
	if fin, err = r.finalRanker(ranklog).rankFinal(ctx, sc, anchors, second, fin); err != nil {
		return nil, err
	}
	res, err := r.explainer().explain(ctx, r.result(sc.grounded), sc, anchors, ref, fin)
	if err != nil {
		return nil, err
	}
	res.TimingsMS["total"] = float64(time.Since(begin).Microseconds()) / 1000
	return res, nil
}

// Candidates runs phases 1 and 2 only and returns every stage-1 candidate
// with its score breakdown (semantic and structural scores, their z-scores,
// the gate's weights), in stage-1 order. It is what the gate is trained on.
func (p *Pipeline) Candidates(ctx context.Context, query string, opts Options) ([]Doc, *Result, error) {
	query, err := cleanQuery(query)
	if err != nil {
		return nil, nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, nil, err
	}
	r := p.newRequest(query, opts)
	rec, err := r.recaller().recall(ctx)
	if err != nil {
		return nil, nil, err
	}
	sc, err := r.scorer(nil).score(ctx, rec)
	if err != nil {
		return nil, nil, err
	}
	return sc.docs, r.result(sc.grounded), nil
}

// cleanQuery trims query and rejects an empty one.
func cleanQuery(query string) (string, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return "", errs.Field("query", "must not be empty")
	}
	return query, nil
}

// relations returns the relation-text cache for the request's text mode.
func (p *Pipeline) relations(directed bool) *pathrel.Relations {
	if directed {
		return p.relsDirected
	}
	return p.relsPlain
}
