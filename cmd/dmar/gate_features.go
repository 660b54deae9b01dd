package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/eval"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/server"
)

func init() {
	register("gate features", "export the gate's training data: per question and stage-1 candidate, the encoder vectors, z-scores and gold label (.npy)", runGateFeatures)
	register("gate evidence", "export the evidence-aware gate's training data: per question, every candidate of both scoring stages of dmar (the question-aware options) with its evidence features and gold label (.npy)", runGateEvidence)
	register("gate ranker", "export the learned ranker's training data: per question, every candidate of dmar's final pool with the ranker's inputs and its gold label (.npy)", runGateRanker)
	register("graph features", "export the relation prior's training data: per question the linked entities, the entities its graph channel reaches and their paths, enc(Q) and the relation texts' vectors", runGraphFeatures)
}

// runGateFeatures writes eval.GateFeatures of the configured pipeline for
// every question of a labelled dataset (eval.Open: kgqa gold_doc_ids,
// HotpotQA/MuSiQue supporting paragraphs) under --out.
func runGateFeatures(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runFeatures(ctx, "gate features", args, stderr, nil, func(p *pipeline.Pipeline, ds *eval.Dataset, out string) error {
		return eval.GateFeatures(ctx, p, ds.Questions, out, stdout, stderr)
	})
}

// runGateEvidence writes eval.GateEvidence of the configured pipeline, run
// with the question-aware options (dmar eval's dmar), under --out.
func runGateEvidence(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return runFeatures(ctx, "gate evidence", args, stderr, nil, func(p *pipeline.Pipeline, ds *eval.Dataset, out string) error {
		return eval.GateEvidence(ctx, p, ds.Questions, p.Defaults().QuestionAware(), out, stdout, stderr)
	})
}

// runGateRanker writes eval.GateRanker of the configured pipeline, run with
// the question-aware options (dmar eval's dmar, or with --stages all
// dmar-full's), under --out.
func runGateRanker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var stages *string
	opts := &optionList{}
	more := func(fs *flag.FlagSet) {
		stages = fs.String("stages", "dmar", "the options the pool is found with: dmar (the method's) or all (dmar-full: the paper's stages on too)")
		fs.Var(opts, "o", "a retrieval option as name=value on top of --stages', repeatable (names as in the API)")
	}
	return runFeatures(ctx, "gate ranker", args, stderr, more, func(p *pipeline.Pipeline, ds *eval.Dataset, out string) error {
		o := p.Defaults().QuestionAware()
		switch *stages {
		case "dmar":
		case "all":
			o = o.WithPaperStages()
		default:
			return usageError{fmt.Sprintf("--stages must be dmar or all, got %q", *stages)}
		}
		if len(*opts) > 0 {
			// The options are read as a request's are (names, ranges and
			// errors as the API's); the query stands in for the dataset's.
			body, err := api.RawRequest("-", *opts)
			if err != nil {
				return usageError{err.Error()}
			}
			req, err := server.DecodeRetrieve(bytes.NewReader(body), o)
			if err != nil {
				return cliErr(err)
			}
			o = req.Options
		}
		return eval.GateRanker(ctx, p, ds.Questions, o, out, stdout, stderr)
	})
}

// runGraphFeatures writes eval.GraphFeatures of the configured pipeline for
// every question of a labelled dataset under --out.
func runGraphFeatures(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var hops *int
	var linking *string
	more := func(fs *flag.FlagSet) {
		hops = fs.Int("hops", 2, "hops walked from the linked entities (1 or 2)")
		linking = fs.String("linking", "context", "entity linking: exact or context")
	}
	return runFeatures(ctx, "graph features", args, stderr, more, func(p *pipeline.Pipeline, ds *eval.Dataset, out string) error {
		opts := p.Defaults()
		opts.Linking = *linking
		if err := opts.Validate(); err != nil {
			return cliErr(err)
		}
		return eval.GraphFeatures(ctx, p, ds.Questions, opts, *hops, out, stdout, stderr)
	})
}

// runFeatures is the export commands' shared part: the flags (with more's),
// the labelled dataset and the configured pipeline, handed to export.
func runFeatures(ctx context.Context, name string, args []string, stderr io.Writer, more func(*flag.FlagSet), export func(*pipeline.Pipeline, *eval.Dataset, string) error) error {
	var a appFlags
	var f eval.GateFlags
	fs := a.flags(name, stderr)
	f.Register(fs)
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
	log := warnLogger(stderr)
	p, set, err := a.pipelineFor(ctx, stderr, log, nil)
	if err != nil {
		return err
	}
	defer set.Close()
	return export(p, ds, f.Out)
}
