package main

import (
	"context"
	"flag"
	"io"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/eval"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/server"
)

func init() {
	register("gate features", "export the gate's training data: per question and stage-1 candidate, the encoder vectors, z-scores and gold label (.npy)", runGateFeatures)
	register("gate evidence", "export the evidence-aware gate's training data: per question, every candidate of both scoring stages of dmar (the question-aware options) with its evidence features and gold label (.npy)", runGateEvidence)
	register("gate ranker", "export the learned ranker's training data: per question, every candidate of dmar's final pool with the ranker's inputs and its gold label (.npy)", runGateRanker)
	register("graph relproj-features", "export the relation projection's training data: questions (masked as linking masks them) and seeded corpus sentences (a random span cut), their features under the encoder and their vectors under the relation encoder", runRelProjFeatures)
	register("graph features", "export the relation prior's training data: per question the linked entities, the entities its graph channel reaches and their paths, enc(Q) and the relation texts' vectors", runGraphFeatures)
}

// runGateFeatures writes eval.GateFeatures of the configured pipeline for
// every question of a labelled dataset (eval.Open: kgqa gold_doc_ids,
// HotpotQA/MuSiQue supporting paragraphs) under --out.
func runGateFeatures(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runFeatures(ctx, "gate features", args, stderr, nil, func(p *pipeline.Pipeline, _ *backends.Set, ds *eval.Dataset, out string) error {
		return eval.GateFeatures(ctx, p, ds.Questions, out, stdout, stderr)
	})
}

// runGateEvidence writes eval.GateEvidence of the configured pipeline, run
// with the question-aware options (dmar eval's dmar), under --out.
func runGateEvidence(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runFeatures(ctx, "gate evidence", args, stderr, nil, func(p *pipeline.Pipeline, _ *backends.Set, ds *eval.Dataset, out string) error {
		return eval.GateEvidence(ctx, p, ds.Questions, p.Defaults().QuestionAware(), out, stdout, stderr)
	})
}

// runGateRanker writes eval.GateRanker of the configured pipeline, its pool
// found with eval.RankerFlags' options, under --out.
func runGateRanker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f eval.RankerFlags
	return runFeatures(ctx, "gate ranker", args, stderr, f.Register, func(p *pipeline.Pipeline, _ *backends.Set, ds *eval.Dataset, out string) error {
		o, err := f.Pool(p.Defaults())
		if err == nil {
			o, err = server.DecodeOptions(f.Options, o)
		}
		if err != nil {
			return cliErr(err)
		}
		return eval.GateRanker(ctx, p, ds.Questions, o, out, stdout, stderr)
	})
}

// runGraphFeatures writes eval.GraphFeatures of the configured pipeline for
// every question of a labelled dataset under --out.
func runGraphFeatures(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f eval.GraphFlags
	return runFeatures(ctx, "graph features", args, stderr, f.Register, func(p *pipeline.Pipeline, _ *backends.Set, ds *eval.Dataset, out string) error {
		opts, err := f.Options(p.Defaults())
		if err != nil {
			return cliErr(err)
		}
		return eval.GraphFeatures(ctx, p, ds.Questions, opts, f.Hops, out, stdout, stderr)
	})
}

// runRelProjFeatures writes eval.RelProjectionFeatures of the configured
// encoders: the dataset's questions and --sentences drawn from the corpus.
func runRelProjFeatures(ctx context.Context, args []string, _, stderr io.Writer) error {
	var f eval.GraphFlags
	var n int
	var seed uint64
	more := func(fs *flag.FlagSet) {
		f.Register(fs)
		fs.IntVar(&n, "sentences", 6000, "corpus sentences drawn")
		fs.Uint64Var(&seed, "seed", 1, "seed of the draw and of the cut spans")
	}
	return runFeatures(ctx, "graph relproj-features", args, stderr, more, func(p *pipeline.Pipeline, set *backends.Set, ds *eval.Dataset, out string) error {
		opts, err := f.Options(p.Defaults())
		if err != nil {
			return cliErr(err)
		}
		m := set.Models
		d := eval.RelProjectionData{Questions: ds.Questions, Options: opts, CorpusFiles: set.CorpusFiles(), Sentences: n, Seed: seed}
		return eval.RelProjectionFeatures(ctx, p, m.Encoder, m.RelationEncoder, d, out, stderr)
	})
}

// runFeatures is the export commands' shared part: the flags (with more's),
// the labelled dataset and the configured pipeline, handed to export.
func runFeatures(ctx context.Context, name string, args []string, stderr io.Writer, more func(*flag.FlagSet), export func(*pipeline.Pipeline, *backends.Set, *eval.Dataset, string) error) error {
	var a appFlags
	var f eval.GateFlags
	fs := a.flags(name, stderr, f.Register)
	if more != nil {
		more(fs)
	}
	if err := a.parse(fs, args); err != nil {
		return err
	}
	ds, corpus, err := f.Prepare(a.cfg.State, a.cfg.Corpus, a.cfg.CorpusFile())
	if err != nil {
		return cliErr(err)
	}
	a.cfg.Corpus = corpus
	p, set, err := a.pipelineFor(ctx, stderr, warnLogger(stderr), nil)
	if err != nil {
		return err
	}
	defer set.Close()
	return export(p, set, ds, f.Out)
}
