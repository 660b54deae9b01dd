package main

import (
	"context"
	"io"
	"log/slog"

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
	var f eval.GateFlags
	fs := a.flags("gate features", stderr)
	f.Register(fs)
	if err := a.parse(fs, args); err != nil {
		return err
	}
	ds, corpus, err := f.Prepare(a.cfg.State, a.cfg.Corpus)
	if err != nil {
		return cliErr(err)
	}
	a.cfg.Corpus = corpus
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, m, _, err := a.pipelineFor(ctx, stderr, log, nil)
	if err != nil {
		return err
	}
	defer m.Close()
	return eval.GateFeatures(ctx, p, ds.Questions, f.Out, stdout, stderr)
}

func init() {
	register("graph features", "export the path scorer's training data: per question the linked entities, the entities its graph channel reaches and their paths, enc(Q) and the relation texts' vectors", runGraphFeatures)
}

// runGraphFeatures writes eval.GraphFeatures of the configured pipeline for
// every question of a labelled dataset under --out.
func runGraphFeatures(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f eval.GateFlags
	fs := a.flags("graph features", stderr)
	f.Register(fs)
	hops := fs.Int("hops", 2, "hops walked from the linked entities (1 or 2)")
	linking := fs.String("linking", "context", "entity linking: exact or context")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	ds, corpus, err := f.Prepare(a.cfg.State, a.cfg.Corpus)
	if err != nil {
		return cliErr(err)
	}
	a.cfg.Corpus = corpus
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, m, _, err := a.pipelineFor(ctx, stderr, log, nil)
	if err != nil {
		return err
	}
	defer m.Close()
	opts := p.Defaults()
	opts.Linking = *linking
	if err := opts.Validate(); err != nil {
		return cliErr(err)
	}
	return eval.GraphFeatures(ctx, p, ds.Questions, opts, *hops, f.Out, stdout, stderr)
}
