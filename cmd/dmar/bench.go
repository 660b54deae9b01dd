package main

import (
	"context"
	"io"
	"log/slog"

	"github.com/dmar-kg/dmar/internal/bench"
)

func init() {
	register("bench latency", "p50/p95 latency of DMAR (exact and Monte Carlo) beside plain hybrid search, over a question file", runBenchLatency)
	register("bench embed", "documents/s of corpus embedding per encoder, beside the chunked load path of before (bench_embed.go)", runBenchEmbed)
}

func runBenchLatency(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := a.flags("bench latency", stderr)
	qpath := fs.String("questions", "", "JSONL file with a question field per line (e.g. ../shared/data/kgqa/dev.jsonl)")
	limit := fs.Int("limit", 0, "use only the first N questions")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if *qpath == "" {
		return usageError{"bench latency: --questions is required"}
	}
	qs, err := bench.ReadQuestions(*qpath, *limit)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, m, _, err := a.pipelineFor(ctx, stderr, log, nil)
	if err != nil {
		return err
	}
	defer m.Close()
	b := bench.Latency{Pipeline: p, Questions: qs, QuestionsPath: *qpath, Index: a.cfg.Index, Graph: a.cfg.Graph, WarmRoots: entityRoots(p.Graph())}
	return b.Run(ctx, stdout, stderr)
}
