package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/eval"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

func init() {
	register("eval", "measure retrieval quality of BM25, dense, hybrid, DMAR and its ablations on a benchmark", runEval)
}

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := a.flags("eval", stderr)
	rd := config.ReaderEnv(os.Getenv)
	dataset := fs.String("dataset", "", "FORMAT:PATH with FORMAT one of "+strings.Join(eval.Formats, ", ")+" (e.g. kgqa:../shared/data/kgqa/dev.jsonl, hotpotqa:../shared/data/hotpotqa-100)")
	systems := fs.String("systems", strings.Join(eval.SystemNames, ","), "comma-separated systems: "+strings.Join(eval.SystemNames, ", "))
	out := fs.String("out", "", "output folder for report.md, results.json, per_question.jsonl and plots")
	limit := fs.Int("limit", 0, "evaluate only the first N questions")
	kmax := fs.Int("k-max", 20, "documents retrieved per question (metrics at k = 1, 5, 10, 20 up to this)")
	alpha := fs.Float64("hybrid-alpha", 0.5, "weight of the vector side of the hybrid baseline (Weaviate's alpha)")
	resamples := fs.Int("bootstrap", 1000, "bootstrap resamples for the confidence intervals")
	seed := fs.Uint64("seed", 1, "seed of the bootstrap and of Monte Carlo Shapley")
	readerURL := fs.String("reader-url", rd.BaseURL, "OpenAI-compatible base URL of a generator for EM/F1 (env DMAR_READER_BASE_URL); unset: no end-to-end metrics")
	readerModel := fs.String("reader-model", rd.Model, "generator model name (env DMAR_READER_MODEL)")
	readerK := fs.Int("reader-k", 5, "documents the generator reads")
	skipMissing := fs.Bool("skip-missing-gold", false, "drop questions whose gold documents are not all in the index (e.g. kgqa over the codexm-film subset), and say how many in the report")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if *dataset == "" || *out == "" {
		return usageError{"eval: --dataset and --out are required"}
	}
	if *kmax < 1 || *kmax > 200 {
		return usageError{fmt.Sprintf("eval: --k-max must be between 1 and 200, got %d", *kmax)}
	}
	if (*readerURL == "") != (*readerModel == "") {
		return usageError{"eval: --reader-url and --reader-model go together"}
	}
	ds, err := eval.Open(*dataset, *limit)
	if err != nil {
		return usageError{"eval: " + err.Error()}
	}
	if ds.Corpus != nil && a.cfg.Corpus == "" {
		// A benchmark's own paragraphs go through the same load path as any
		// corpus: written once as corpus JSONL, keyed by content.
		if a.cfg.Corpus, err = eval.WriteCorpus(a.cfg.State, ds); err != nil {
			return err
		}
	}
	base := pipeline.Defaults()
	base.Seed = *seed
	sys, err := eval.Systems(strings.Split(*systems, ","), base, *kmax, *alpha)
	if err != nil {
		return usageError{"eval: " + err.Error()}
	}

	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, m, _, err := a.pipelineFor(ctx, stderr, log, nil)
	if err != nil {
		return err
	}
	defer m.Close()

	cfg := eval.Config{Pipeline: p, Index: p.Index(), Encoder: p.Encoder(), KMax: *kmax, ReaderK: *readerK, Progress: a.progressOut(stderr)}
	if *readerURL != "" {
		cfg.Reader = &eval.Reader{BaseURL: *readerURL, Model: *readerModel, APIKey: rd.APIKey.Reveal(), Timeout: time.Minute}
	}
	missing, err := eval.CheckGold(ctx, p.Index(), ds, *skipMissing, stderr)
	if err != nil {
		return err
	}
	start := time.Now()
	recs, err := eval.Run(ctx, cfg, ds, sys)
	if err != nil {
		return err
	}
	s := eval.Summarize(ds, sys, recs, *kmax, *resamples, *seed)
	s.Dataset.Corpus, s.Dataset.Graph, s.Dataset.Index, s.Dataset.MissingGold = a.cfg.CorpusFile(), a.graphName(), a.cfg.Index, missing
	if w, ok := p.Index().(retrieval.Writer); ok && s.Dataset.CorpusDocs == 0 {
		if n, err := w.Count(ctx); err == nil {
			s.Dataset.CorpusDocs = n
		}
	}
	s.Models = m.InUse()
	if cfg.Reader != nil {
		s.Generator = fmt.Sprintf("%s at %s, top %d documents, temperature 0", *readerModel, *readerURL, *readerK)
	}
	s.Extra = map[string]any{"command": "dmar eval " + strings.Join(args, " "), "elapsed_s": time.Since(start).Seconds()}
	return eval.WriteReport(*out, s, recs, stdout)
}

func (a *appFlags) graphName() string {
	if a.cfg.GraphBackend().Embedded() {
		return "embedded (" + a.cfg.BundleDir() + ")"
	}
	return a.cfg.Graph
}
