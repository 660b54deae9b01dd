package eval

import (
	"context"
	"flag"
	"fmt"
	"github.com/dmar-kg/dmar/internal/answer"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// Flags are dmar eval's own flags (Register); Prepare checks them and opens
// the dataset, Execute evaluates and writes the report.
type Flags struct {
	Dataset, Out, systems       string
	limit, kmax, readerK, boot  int
	sample                      int
	readerChars, evidenceTokens int
	readerTimeout               time.Duration
	readerCache, readerSHA      string
	graphRelevance              float64
	alpha                       float64
	seed                        uint64
	reader                      config.Reader
	skipMissing                 bool
	linking, half, baselines    string
}

// Register adds f's flags to fs; reader holds the generator's defaults
// (config.ReaderEnv) and its API key.
func (f *Flags) Register(fs *flag.FlagSet, reader config.Reader) {
	f.reader = reader
	fs.StringVar(&f.Dataset, "dataset", "", "FORMAT:PATH with FORMAT one of "+strings.Join(Formats, ", ")+" (e.g. kgqa:../shared/data/kgqa/dev.jsonl, hotpotqa:../shared/data/hotpotqa-100)")
	fs.StringVar(&f.systems, "systems", strings.Join(SystemNames, ","), "comma-separated systems: "+strings.Join(SystemNames, ", "))
	fs.StringVar(&f.Out, "out", "", "output folder for report.md, results.json, per_question.jsonl and plots")
	fs.IntVar(&f.limit, "limit", 0, "evaluate only the first N questions")
	fs.IntVar(&f.sample, "sample", 0, "evaluate a seeded sample of N questions (after --half; the n smallest sha256 of --seed and id, in file order)")
	fs.StringVar(&f.baselines, "baselines", "", "comma-separated baseline systems the best baseline is chosen from, per metric (e.g. dense,hybrid); empty: every baseline in --systems")
	fs.StringVar(&f.half, "half", "", "evaluate one half of the questions by a fixed rule (the first byte of sha256(id) even: tune, odd: report); empty: all. Settings are tuned on the tune half and reported on the other (docs/eval.md)")
	fs.IntVar(&f.kmax, "k-max", 20, "documents retrieved per question (metrics at k = 1, 5, 10, 20 up to this)")
	fs.Float64Var(&f.alpha, "hybrid-alpha", 0.5, "weight of the vector side of the hybrid baseline (Weaviate's alpha)")
	fs.IntVar(&f.boot, "bootstrap", 1000, "bootstrap resamples for the confidence intervals")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the bootstrap and of Monte Carlo Shapley")
	fs.StringVar(&f.reader.BaseURL, "reader-url", reader.BaseURL, "OpenAI-compatible base URL of a generator for EM/F1 (env DMAR_READER_BASE_URL); unset: no end-to-end metrics")
	fs.StringVar(&f.reader.Model, "reader-model", reader.Model, "generator model name (env DMAR_READER_MODEL)")
	fs.IntVar(&f.readerK, "reader-k", 5, "documents the generator reads")
	fs.IntVar(&f.readerChars, "reader-chars", 600, "characters of each document a claim's verifier reads with --reader-evidence-tokens 0 (0: whole documents)")
	fs.IntVar(&f.evidenceTokens, "reader-evidence-tokens", answer.DefaultEvidenceTokens, "the reader's evidence budget in tokens, as POST /v1/answer's evidence_tokens (0: the documents' heads, as before)")
	fs.StringVar(&f.readerCache, "reader-cache", "", "a JSON-lines file of the reader's replies keyed by the model file's sha256 and the request's (needs --reader-model-sha256); default: a folder in the state directory keyed by model name")
	fs.StringVar(&f.readerSHA, "reader-model-sha256", "", "sha256 of the reader's model file, the key of --reader-cache (models/llm/MODELS lists the local models')")
	fs.Float64Var(&f.graphRelevance, "graph-min-relevance", answer.DefaultGraphTrust.MinRelevance, "path relevance from which a graph answer is trusted (graph_em, graph_f1, em_graph, f1_graph)")
	fs.DurationVar(&f.readerTimeout, "reader-timeout", 3*time.Minute, "time limit of one generator call (a 1.5B model on 2 busy cores needs minutes)")
	fs.StringVar(&f.linking, "linking", "", "entity linking of every DMAR system, overriding each system's own (dmar: context, dmar-paper: exact): exact or context; kgqa reports linking P/R/F1 either way")
	fs.BoolVar(&f.skipMissing, "skip-missing-gold", false, "drop questions whose gold documents are not all in the index (e.g. kgqa over the codexm-film subset), and say how many in the report")
}

// Prepare checks f and opens its dataset and systems. corpus is the
// configured corpus setting and resolved the file(s) it stands for: when
// corpus is "" and the benchmark brings its own paragraphs, they are written
// under state (CorpusFor) and that file is returned instead; a benchmark
// with passages to pool (nq-open) returns resolved with them added. Bad flags, an unreadable dataset and unknown systems
// are errs.Invalid errors.
func (f *Flags) Prepare(state, corpus, resolved string) (*Dataset, []System, string, error) {
	if f.Dataset == "" || f.Out == "" {
		return nil, nil, "", errs.E(errs.Invalid, "eval: --dataset and --out are required")
	}
	if f.kmax < 1 || f.kmax > 200 {
		return nil, nil, "", errs.E(errs.Invalid, "eval: --k-max must be between 1 and 200, got %d", f.kmax)
	}
	if (f.reader.BaseURL == "") != (f.reader.Model == "") {
		return nil, nil, "", errs.E(errs.Invalid, "eval: --reader-url and --reader-model go together")
	}
	if (f.readerCache == "") != (f.readerSHA == "") {
		return nil, nil, "", errs.E(errs.Invalid, "eval: --reader-cache and --reader-model-sha256 go together")
	}
	if f.evidenceTokens < 0 || f.evidenceTokens > answer.MaxEvidenceTokens {
		return nil, nil, "", errs.E(errs.Invalid, "eval: --reader-evidence-tokens must be between 0 and %d, got %d", answer.MaxEvidenceTokens, f.evidenceTokens)
	}
	ds, err := Open(f.Dataset, 0)
	if err != nil {
		return nil, nil, "", errs.E(errs.Invalid, "eval: %s", err)
	}
	if err := ds.KeepHalf(f.half); err != nil {
		return nil, nil, "", errs.E(errs.Invalid, "eval: %s", err)
	}
	ds.Sample(f.sample, f.seed)
	ds.Limit(f.limit)
	if corpus, err = CorpusFor(ds, state, corpus); err != nil {
		return nil, nil, "", err
	}
	if len(ds.ExtraCorpora) > 0 {
		corpus = strings.Join(append([]string{resolved}, ds.ExtraCorpora...), ",")
	}
	base := pipeline.Defaults()
	base.Seed = f.seed
	base.Linking = f.linking
	sys, err := Systems(strings.Split(f.systems, ","), base, f.kmax, f.alpha)
	if err != nil {
		return nil, nil, "", errs.E(errs.Invalid, "eval: %s", err)
	}
	if err := RestrictBaselines(sys, f.baselines); err != nil {
		return nil, nil, "", errs.E(errs.Invalid, "eval: %s", err)
	}
	return ds, sys, corpus, nil
}

// CorpusFor is corpus, or when it is "" and ds brings its own paragraphs,
// the file WriteCorpus writes them to under state: a benchmark's own
// paragraphs go through the same load path as any corpus, and dmar eval and
// dmar gate features share its index snapshot.
func CorpusFor(ds *Dataset, state, corpus string) (string, error) {
	if ds.Corpus == nil || corpus != "" {
		return corpus, nil
	}
	return WriteCorpus(state, ds)
}

// Setup is what dmar eval evaluates with, beside its flags: the pipeline,
// the models in use (onnx.Models.InUse), and for the report the
// configuration and the command's arguments.
type Setup struct {
	Pipeline *pipeline.Pipeline
	Models   []string
	Config   config.Config
	Args     []string
}

// Execute evaluates sys on ds with the pipeline of s and writes the report
// under f.Out (WriteReport, which prints its summary on stdout); warnings
// about missing gold documents, and progress unless Config.Quiet, go to
// stderr.
func (f *Flags) Execute(ctx context.Context, s Setup, ds *Dataset, sys []System, stdout, stderr io.Writer) error {
	p, c := s.Pipeline, s.Config
	trust := answer.DefaultGraphTrust
	trust.MinRelevance = f.graphRelevance
	cfg := Config{Pipeline: p, Index: p.Index(), Encoder: p.Encoder(), KMax: f.kmax, ReaderK: f.readerK, ReaderChars: f.readerChars,
		EvidenceTokens: f.evidenceTokens, GraphTrust: trust, Progress: stderr}
	if c.Quiet {
		cfg.Progress = nil
	}
	if f.reader.BaseURL != "" {
		cfg.Reader = &Reader{BaseURL: f.reader.BaseURL, Model: f.reader.Model, APIKey: f.reader.APIKey.Reveal(), Timeout: f.readerTimeout,
			Cache: filepath.Join(c.State, "reader-cache")}
		if f.readerCache != "" {
			rc, err := OpenReplyCache(f.readerCache, f.readerSHA)
			if err != nil {
				return errs.E(errs.Invalid, "eval: --reader-cache: %s", err)
			}
			defer rc.Close()
			if rc.Bad > 0 {
				fmt.Fprintf(stderr, "eval: %s: %d lines are not replies (a torn write?); kept in the file, skipped\n", f.readerCache, rc.Bad)
			}
			cfg.Reader.Replies = rc
		}
	}
	missing, err := CheckGold(ctx, p.Index(), ds, f.skipMissing, stderr)
	if err != nil {
		return err
	}
	start := time.Now()
	recs, err := Run(ctx, cfg, ds, sys)
	if err != nil {
		return err
	}
	sum := Summarize(ds, sys, recs, f.kmax, f.boot, f.seed)
	graph := c.Graph
	if c.GraphBackend().Embedded() {
		graph = "embedded (" + c.BundleDir() + ")"
	}
	sum.Dataset.Corpus, sum.Dataset.Graph, sum.Dataset.Index, sum.Dataset.MissingGold = c.CorpusFile(), graph, c.Index, missing
	if w, ok := p.Index().(retrieval.Writer); ok && sum.Dataset.CorpusDocs == 0 {
		if n, err := w.Count(ctx); err == nil {
			sum.Dataset.CorpusDocs = n
		}
	}
	sum.Models = s.Models
	if cfg.Reader != nil {
		sum.Generator = fmt.Sprintf("%s at %s, temperature 0, reading %s", f.reader.Model, f.reader.BaseURL, readerInput(f.evidenceTokens))
	}
	sum.Extra = map[string]any{"command": "dmar eval " + strings.Join(s.Args, " "), "elapsed_s": time.Since(start).Seconds()}
	if cfg.Reader != nil {
		sum.Extra["reader"] = cfg.Reader.Stats()
	}
	return WriteReport(f.Out, sum, recs, stdout)
}

func readerInput(tokens int) string {
	if tokens == 0 {
		return "the top 3 documents' first 500 characters (claims: the top documents' sentences sharing the claim's words)"
	}
	return fmt.Sprintf("the evidence of POST /v1/answer: the best sentences of the top 5 documents and the graph's facts within %d tokens (claims: of the top documents)", tokens)
}

// GateFlags are dmar gate features' own flags (Register); Prepare checks
// them, then GateFeatures writes the features under Out.
type GateFlags struct {
	dataset, Out, half string
	limit              int
}

// Register adds f's flags to fs.
func (f *GateFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.dataset, "dataset", "", "labelled questions as FORMAT:PATH, as dmar eval takes them (kgqa, hotpotqa, musique, jsonl; required)")
	fs.StringVar(&f.Out, "out", "", "output directory (required)")
	fs.IntVar(&f.limit, "limit", 0, "only the first N questions (0 = all)")
	fs.StringVar(&f.half, "half", "", "only one half of the questions (tune or report), as dmar eval --half")
}

// Prepare checks f, opens its dataset (pooled settings only) and makes the
// output folder; corpus is as for Flags.Prepare. Bad flags and an
// unreadable dataset are errs.Invalid errors; the exports that cannot take
// per-question pools (hotpotqa-distractor) refuse them (pooledOnly).
func (f *GateFlags) Prepare(state, corpus, resolved string) (*Dataset, string, error) {
	if f.dataset == "" || f.Out == "" {
		return nil, "", errs.E(errs.Invalid, "--dataset and --out are required")
	}
	ds, err := Open(f.dataset, 0)
	if err != nil {
		return nil, "", errs.E(errs.Invalid, "gate features: %s", err)
	}
	if err := ds.KeepHalf(f.half); err != nil {
		return nil, "", errs.E(errs.Invalid, "gate features: %s", err)
	}
	ds.Limit(f.limit)
	if corpus, err = CorpusFor(ds, state, corpus); err != nil {
		return nil, "", err
	}
	if len(ds.ExtraCorpora) > 0 {
		corpus = strings.Join(append([]string{resolved}, ds.ExtraCorpora...), ",")
	}
	return ds, corpus, os.MkdirAll(f.Out, 0o755)
}
