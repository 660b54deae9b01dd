package main

import (
	"context"
	"flag"
	"io"
	"os"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/eval"
)

func init() {
	register("eval", "measure retrieval quality of BM25, dense, hybrid, DMAR and its ablations on a benchmark", runEval)
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f eval.Flags
	if _, err := a.parseArgs("eval", args, stderr, func(fs *flag.FlagSet) { f.Register(fs, config.ReaderEnv(os.Getenv)) }); err != nil {
		return err
	}
	ds, sys, corpus, err := f.Prepare(a.cfg.State, a.cfg.Corpus, a.cfg.CorpusFile())
	if err != nil {
		return cliErr(err)
	}
	a.cfg.Corpus = corpus
	p, set, err := a.pipelineFor(ctx, stderr, warnLogger(stderr), nil)
	if err != nil {
		return err
	}
	defer set.Close()
	return f.Execute(ctx, eval.Setup{Pipeline: p, Models: set.Models.InUse(), Config: a.cfg, Args: args}, ds, sys, stdout, stderr)
}
