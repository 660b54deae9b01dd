package backends

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/dmar-kg/dmar/internal/answer"
	"github.com/dmar-kg/dmar/internal/chat"
	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/evidence"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/reformulate"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/verify"
)

// OpenPipeline opens what cfg names (Open) and wires a pipeline over it;
// the caller closes the set. On an error nothing stays open.
func OpenPipeline(ctx context.Context, cfg config.Config, out io.Writer, log *slog.Logger, metrics pipeline.Metrics, serve bool) (*pipeline.Pipeline, *Set, error) {
	set, err := Open(ctx, cfg, out, log)
	if err != nil {
		return nil, nil, err
	}
	p, err := set.Pipeline(metrics, log, serve)
	if err != nil {
		set.Close()
		return nil, nil, err
	}
	return p, set, nil
}

// Pipeline is the pipeline over the set's backends and models. serve
// batches concurrent requests' query encodings (dmar serve only: other
// subcommands ask one question at a time).
func (s *Set) Pipeline(metrics pipeline.Metrics, log *slog.Logger, serve bool) (*pipeline.Pipeline, error) {
	return pipeline.New(s.pipelineConfig(metrics, log, serve))
}

func (s *Set) pipelineConfig(metrics pipeline.Metrics, log *slog.Logger, serve bool) pipeline.Config {
	c, m := s.cfg, s.Models
	// Every call to a remote backend gets its own time limit.
	be, _ := metrics.(errs.BackendErrors)
	d := c.Server.BackendTimeout
	graph, x := s.Graph.Graph, s.Index
	_, memIndex := x.(*memindex.Index)
	if s.Graph.Neo4j != nil {
		graph = kg.WithTimeout(s.Graph.Neo4j, "neo4j", d, be)
	}
	if w, ok := x.(*weaviate.Store); ok {
		x = retrieval.WithTimeout(w, "weaviate", d, be)
	}
	enc, gnn, gate := scoring.Timed(metrics, m.Encoder, m.GNN, m.Gate)
	if w := c.Server.EncoderBatchWindow; serve && w > 0 {
		enc = scoring.Batched(enc, scoring.BatchConfig{Window: w, MaxBatch: c.Models.EncoderBatch, MaxInFlight: c.Server.EncoderCalls, PerCaller: m.Encoder.Spec().PerText})
	}
	pc := pipeline.Config{Graph: graph, Index: x, Encoder: enc, GNN: gnn, Gate: gate, Metrics: metrics, Logger: log,
		RelPrior:              m.RelPrior,
		Mentions:              s.Mentions,
		TextGraph:             s.TextGraph,
		EvidenceGate:          m.EvidenceGate,
		Ranker:                m.Ranker,
		MaxShapleyEvaluations: int64(c.Server.MaxRequestCost),
		Method:                c.Method,
		SpeculateChannel:      s.Graph.Neo4j == nil && memIndex}
	if m.RelationEncoder != m.Encoder {
		pc.RelationEncoder = m.RelationEncoder
		if w := c.Server.EncoderBatchWindow; serve && w > 0 {
			// The relation encoder (all-MiniLM-L6-v2, float32: a text's
			// vector does not depend on what shares its call, up to float
			// rounding) takes one short text a request; under load the
			// requests' texts share a call, which reads the model's weights
			// once for them all.
			pc.RelationEncoder = scoring.Batched(m.RelationEncoder, scoring.BatchConfig{Window: w, MaxBatch: c.Models.EncoderBatch, MaxInFlight: c.Server.EncoderCalls, Eager: true})
		}
	}
	if m.Questions != nil {
		// Not micro-batched: the int8 encoder gives each caller a model
		// call of its own anyway (BatchConfig.PerCaller).
		pc.Questions = scoring.TimedQuestions(metrics, m.Questions)
	}
	if ch := c.Chat; ch.BaseURL != "" {
		pc.Chat = reformulate.Chat{BaseURL: ch.BaseURL, Model: ch.Model, APIKey: ch.APIKey.Reveal(), Timeout: ch.Timeout}
	}
	return pc
}

// Answerer is POST /v1/answer's generator: the chat endpoint that also
// serves reformulator=chat; nil without one (the route answers 503). enc
// (the retrieval's encoder) selects the evidence the reader reads. The
// request's time limit bounds each answer.
func Answerer(c config.Chat, enc evidence.Encoder) *answer.Answerer {
	if c.BaseURL == "" {
		return nil
	}
	return answer.New(answer.Config{Generator: chat.Client{BaseURL: c.BaseURL, Model: c.Model, APIKey: c.APIKey.Reveal(), MaxTokens: answer.DefaultMaxTokens},
		Encoder: enc, Evidence: evidence.Default})
}

// Verifier is POST /v1/verify's generator: the same chat endpoint as
// Answerer's, its reply constrained to the verdict's schema, reading the
// evidence enc selects as the answerer does; nil without one.
func Verifier(c config.Chat, enc evidence.Encoder) *verify.Verifier {
	if c.BaseURL == "" {
		return nil
	}
	return verify.New(verify.Config{Generator: chat.Client{BaseURL: c.BaseURL, Model: c.Model, APIKey: c.APIKey.Reveal(), MaxTokens: verify.DefaultMaxTokens},
		Encoder: enc})
}

// Warm extracts and encodes every entity's subgraph of an embedded graph
// before a server listens, so that first requests run at steady state.
// Graphs larger than the cache, and Neo4j, warm up with traffic instead.
func Warm(ctx context.Context, p *pipeline.Pipeline, log *slog.Logger) {
	roots := EntityRoots(p.Graph())
	if roots == nil {
		return
	}
	start := time.Now()
	n, err := p.Warm(ctx, roots(), p.Defaults())
	if err != nil {
		log.Warn("cache warm-up failed; requests warm it instead", "err", err)
		return
	}
	log.Info("cache warmed", "subgraphs", n, "took", time.Since(start).Round(time.Millisecond).String())
}
