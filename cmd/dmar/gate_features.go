package main

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/dmar-kg/dmar/internal/eval"
)

func init() {
	register("gate features", "export the gate's training data: per question and stage-1 candidate, the encoder vectors, z-scores and gold label (.npy)", runGateFeatures)
}

// runGateFeatures writes eval.GateFeatures of the configured pipeline for
// every question of a labelled dataset (eval.Open: kgqa gold_doc_ids,
// HotpotQA/MuSiQue supporting paragraphs) under --out.
func runGateFeatures(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := a.flags("gate features", stderr)
	dataset := fs.String("dataset", "", "labelled questions as FORMAT:PATH, as dmar eval takes them (kgqa, hotpotqa, musique, jsonl; required)")
	out := fs.String("out", "", "output directory (required)")
	limit := fs.Int("limit", 0, "only the first N questions (0 = all)")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if *dataset == "" || *out == "" {
		return usageError{"--dataset and --out are required"}
	}
	ds, err := eval.Open(*dataset, *limit)
	if err != nil {
		return usageError{"gate features: " + err.Error()}
	}
	if ds.Setting == "per-question" {
		return usageError{"gate features: per-question pools (hotpotqa-distractor) are not supported; use hotpotqa"}
	}
	if ds.Corpus != nil && a.cfg.Corpus == "" {
		// A benchmark's own paragraphs: the same corpus file dmar eval
		// writes, so the index snapshot is shared.
		if a.cfg.Corpus, err = eval.WriteCorpus(a.cfg.State, ds); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, m, _, err := a.pipelineFor(ctx, stderr, log, nil)
	if err != nil {
		return err
	}
	defer m.Close()
	return eval.GateFeatures(ctx, p, ds.Questions, *out, stdout, stderr)
}
