package backends

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/dmar-kg/dmar/internal/bench"
	"github.com/dmar-kg/dmar/internal/chat"
	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// RunLatency runs dmar bench latency: f's questions through the pipeline
// over cfg (over the corpus the questions' dataset brings, where it brings
// one), beside the embedded twin when cfg names remote backends.
func RunLatency(ctx context.Context, cfg config.Config, f bench.LatencyFlags, stdout, stderr io.Writer, log *slog.Logger) error {
	qs, p, set, err := benchPipeline(ctx, cfg, f.ReadQuestions, stderr, log)
	if err != nil {
		return err
	}
	defer set.Close()
	bs, err := set.LatencyBackends(ctx, p, stderr, log)
	if err != nil {
		return err
	}
	stop, err := f.StartProfile()
	if err != nil {
		return err
	}
	defer stop()
	return f.Latency(qs, bs).Run(ctx, stdout, stderr)
}

// RunAnswer runs dmar bench answer: f's dataset answered through the
// pipeline over cfg (over the dataset's corpus, where it brings one) by the
// reader at cfg.Chat.
func RunAnswer(ctx context.Context, cfg config.Config, f bench.AnswerFlags, stdout, stderr io.Writer, log *slog.Logger) error {
	ds, p, set, err := benchPipeline(ctx, cfg, f.Open, stderr, log)
	if err != nil {
		return err
	}
	defer set.Close()
	c := cfg.Chat
	reader := chat.Client{BaseURL: c.BaseURL, Model: c.Model, APIKey: c.APIKey.Reveal(), Timeout: 2 * time.Minute}
	return f.Answer(ctx, p, reader, ds, stdout, stderr)
}

// benchPipeline reads a bench's inputs (read: its questions or dataset,
// and the corpus they are searched in, given the state folder and the
// configured corpus), then opens the pipeline over cfg with that corpus.
func benchPipeline[T any](ctx context.Context, cfg config.Config, read func(state, corpus string) (T, string, error), stderr io.Writer, log *slog.Logger) (T, *pipeline.Pipeline, *Set, error) {
	in, corpus, err := read(cfg.State, cfg.Corpus)
	if err != nil {
		return in, nil, nil, err
	}
	cfg.Corpus = corpus
	p, set, err := OpenPipeline(ctx, cfg, stderr, log, nil, false)
	return in, p, set, err
}

// RunSubgraphs runs dmar bench subgraphs: the embedded graph over cfg's
// bundle beside the Neo4j that cfg.Graph names, on the same roots.
func RunSubgraphs(ctx context.Context, cfg config.Config, f bench.SubgraphFlags, stdout, stderr io.Writer, _ *slog.Logger) error {
	if cfg.GraphBackend().Embedded() {
		return errs.E(errs.Invalid, "bench subgraphs: --graph must name the Neo4j to compare (neo4j://HOST:PORT or bolt://HOST:PORT)")
	}
	emb, _, err := Inputs(cfg, stderr).Graph(ctx)
	if err != nil {
		return err
	}
	st, err := neo4jkg.Open(ctx, Neo4j(cfg))
	if err != nil {
		return err
	}
	defer st.Close(context.Background())
	return f.Run(ctx, emb, st, cfg.Graph, stdout, stderr)
}

// LatencyBackends are what dmar bench latency times: p, the set's pipeline,
// alone when the set is embedded; else its embedded twin over the same
// data and models first, then p as "remote", warmed with the twin's roots
// when its own graph gives none (Neo4j).
func (s *Set) LatencyBackends(ctx context.Context, p *pipeline.Pipeline, out io.Writer, log *slog.Logger) ([]bench.LatencyBackend, error) {
	given := bench.LatencyBackend{Name: "embedded", Detail: bench.BackendName(s.cfg.Graph, s.cfg.Index), Pipeline: p, WarmRoots: EntityRoots(p.Graph())}
	if s.cfg.GraphBackend().Embedded() && s.cfg.IndexBackend().Embedded() {
		return []bench.LatencyBackend{given}, nil
	}
	emb, err := s.Embedded(ctx, out)
	if err != nil {
		return nil, fmt.Errorf("bench latency: the embedded backends to compare with: %w", err)
	}
	ep, err := emb.Pipeline(nil, log, false)
	if err != nil {
		return nil, err
	}
	twin := bench.LatencyBackend{Name: "embedded", Detail: bench.BackendName("", ""), Pipeline: ep, WarmRoots: EntityRoots(ep.Graph())}
	if given.WarmRoots == nil {
		given.WarmRoots = twin.WarmRoots
	}
	given.Name = "remote"
	return []bench.LatencyBackend{twin, given}, nil
}
