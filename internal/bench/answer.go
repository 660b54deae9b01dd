package bench

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dmar-kg/dmar/internal/answer"
	"github.com/dmar-kg/dmar/internal/chat"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/eval"
	"github.com/dmar-kg/dmar/internal/evidence"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/stats"
)

// AnswerFlags are dmar bench answer's flags.
type AnswerFlags struct {
	Questions      string
	Half           string
	Limit          int
	EvidenceTokens int
	MinRelevance   float64
	Out            string
	Boot           int
	// NoReader measures only what each way shows the reader: whether the
	// gold answer's words are in it, and its tokens (for tuning Evidence).
	NoReader bool
	Evidence evidence.Config
}

// Register adds the flags to fs.
func (f *AnswerFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Questions, "questions", "", "a dmar eval dataset FORMAT:PATH with answers (e.g. kgqa:../shared/data/kgqa/dev.jsonl, hotpotqa:../shared/data/hotpotqa-100), searched as dmar eval searches it")
	fs.StringVar(&f.Half, "half", "", "only the tune or the report half of the questions (dmar eval --half)")
	fs.IntVar(&f.Limit, "limit", 20, "the first N questions (0: all)")
	fs.IntVar(&f.EvidenceTokens, "evidence-tokens", evidence.DefaultTokens, "the default path's evidence budget (POST /v1/answer's evidence_tokens)")
	fs.Float64Var(&f.MinRelevance, "graph-min-relevance", answer.DefaultGraphTrust.MinRelevance, "path relevance from which a graph answer is trusted")
	fs.StringVar(&f.Out, "out", "", "folder for per_question.jsonl (optional)")
	fs.IntVar(&f.Boot, "bootstrap", 1000, "bootstrap resamples of the F1 difference's interval")
	fs.BoolVar(&f.NoReader, "no-reader", false, "ask no reader: only whether each way's prompt holds a gold answer, and its estimated tokens")
	fs.Float64Var(&f.Evidence.Lead, "evidence-lead", evidence.Default.Lead, "tuning: score added to each document's first sentence")
	fs.Float64Var(&f.Evidence.RankDecay, "evidence-rank-decay", evidence.Default.RankDecay, "tuning: score taken per place a document stands below the first")
	fs.IntVar(&f.Evidence.Docs, "evidence-docs", evidence.Default.Docs, "tuning: documents whose sentences compete")
}

// Open reads the questions and says which corpus to search them in (as
// LatencyFlags.ReadQuestions does): only questions with answers are kept.
func (f AnswerFlags) Open(state, corpus string) (*eval.Dataset, string, error) {
	if f.Questions == "" {
		return nil, "", errs.E(errs.Invalid, "bench answer: --questions FORMAT:PATH is required")
	}
	if f.EvidenceTokens < 1 || f.EvidenceTokens > answer.MaxEvidenceTokens {
		return nil, "", errs.E(errs.Invalid, "bench answer: --evidence-tokens must be between 1 and %d, got %d", answer.MaxEvidenceTokens, f.EvidenceTokens)
	}
	ds, err := eval.Open(f.Questions, 0)
	if err != nil {
		return nil, "", errs.E(errs.Invalid, "bench answer: %s", err)
	}
	if err := ds.KeepHalf(f.Half); err != nil {
		return nil, "", errs.E(errs.Invalid, "bench answer: %s", err)
	}
	var kept []eval.Question
	for _, q := range ds.Questions {
		if len(q.Answers) > 0 && q.Label == "" && len(q.Pool) == 0 {
			kept = append(kept, q)
		}
	}
	if len(kept) == 0 {
		return nil, "", errs.E(errs.Invalid, "bench answer: %s has no questions with answers to search in a pooled corpus", f.Questions)
	}
	ds.Questions = kept
	ds.Limit(f.Limit)
	if corpus, err = eval.CorpusFor(ds, state, corpus); err != nil {
		return nil, "", err
	}
	return ds, corpus, nil
}

// AnswerRecord is one question answered both ways.
type AnswerRecord struct {
	ID         string    `json:"id"`
	Question   string    `json:"question"`
	Answers    []string  `json:"answers"`
	RetrieveMS float64   `json:"retrieve_ms"`
	Heads      AnswerRun `json:"heads"`    // before: the top 3 documents' first 500 characters
	Evidence   AnswerRun `json:"evidence"` // a trusted graph answer, else the selected evidence
	// Default is the server's default: a trusted graph answer (Evidence's
	// run), else the reader over the heads (Heads' run, not asked twice).
	Default AnswerRun         `json:"default"`
	Graph   *eval.GraphRecord `json:"graph,omitempty"`
}

// AnswerRun is one way's answer, its cost and its score.
type AnswerRun struct {
	Answer   string     `json:"answer"`
	Source   string     `json:"source"`
	AnswerMS float64    `json:"answer_ms"` // selection and generation, without the retrieval
	Usage    chat.Usage `json:"usage"`
	EM       float64    `json:"em"`
	F1       float64    `json:"f1"`
	Error    string     `json:"error,omitempty"`
}

// usageGen is the reader with each call's usage kept for the record.
type usageGen struct {
	cl   chat.Client
	last chat.Usage
}

func (g *usageGen) Complete(ctx context.Context, msgs []chat.Message) (string, error) {
	out, u, err := g.cl.CompleteUsage(ctx, msgs)
	g.last = u
	return out, err
}

func (g *usageGen) Stream(ctx context.Context, msgs []chat.Message, onDelta func(string) error) (string, error) {
	out, err := g.Complete(ctx, msgs)
	if err == nil && onDelta != nil {
		err = onDelta(out)
	}
	return out, err
}

// Answer runs dmar bench answer: every question retrieved once with p's
// defaults, then answered by the reader from the documents' heads (before)
// and by the default path (a trusted graph answer, else the reader over the
// selected evidence), in alternating order. It prints latency, tokens,
// EM/F1 of both, the paired F1 difference and the graph's share, and ends
// with "answer_p50_s=P answer_speedup=X f1_delta=D [lo, hi]".
func (f AnswerFlags) Answer(ctx context.Context, p *pipeline.Pipeline, reader chat.Client, ds *eval.Dataset, stdout, stderr io.Writer) error {
	if reader.BaseURL == "" && !f.NoReader {
		return errs.E(errs.Invalid, "bench answer: a reader is needed: --chat-url URL --chat-model NAME (scripts/services.sh start llm), or --no-reader")
	}
	reader.MaxTokens = answer.DefaultMaxTokens
	gen := &usageGen{cl: reader}
	a := answer.New(answer.Config{Generator: gen, Encoder: p.Encoder(), Evidence: f.Evidence})
	if f.NoReader {
		return f.shown(ctx, p, a, ds, stdout, stderr)
	}
	trust := answer.DefaultGraphTrust
	trust.MinRelevance = f.MinRelevance
	opts := p.Defaults()
	m := progress.New(stderr, "bench answer", "questions", len(ds.Questions))
	var recs []AnswerRecord
	for i, q := range ds.Questions {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := AnswerRecord{ID: q.ID, Question: q.Question, Answers: q.Answers}
		t := time.Now()
		res, err := p.Retrieve(ctx, q.Question, opts)
		if err != nil {
			return fmt.Errorf("bench answer: retrieve %s: %w", q.ID, err)
		}
		rec.RetrieveMS = msSince(t)
		docs := answer.SourcesOf(res)
		g := answer.GraphOf(res, trust)
		if g != nil {
			rec.Graph = &eval.GraphRecord{Label: g.Label, Doc: g.Doc, Path: g.Path, Relevance: g.Relevance, Confidence: g.Confidence, Agree: g.Agree, Trusted: g.Trusted}
		}
		heads := func() { rec.Heads = runAnswer(ctx, a, gen, q, docs, answer.Options{}) }
		def := func() {
			rec.Evidence = runAnswer(ctx, a, gen, q, docs, answer.Options{EvidenceTokens: f.EvidenceTokens, Graph: g})
		}
		if i%2 == 0 {
			heads()
			def()
		} else {
			def()
			heads()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rec.Default = rec.Heads
		if rec.Evidence.Source == answer.SourceGraph {
			rec.Default = rec.Evidence
		}
		recs = append(recs, rec)
		m.Add(1)
	}
	m.Done()
	if f.Out != "" {
		if err := writeAnswerRecords(f.Out, recs); err != nil {
			return err
		}
	}
	return f.report(stdout, reader, ds, recs)
}

// shown is --no-reader: for each way, the share of questions whose prompt
// holds a gold answer (normalised words, as answer recall counts them) and
// the prompt's estimated tokens.
func (f AnswerFlags) shown(ctx context.Context, p *pipeline.Pipeline, a *answer.Answerer, ds *eval.Dataset, stdout, stderr io.Writer) error {
	trust := answer.DefaultGraphTrust
	trust.MinRelevance = f.MinRelevance
	var hHeads, hEv, tHeads, tEv []float64
	graph := 0
	m := progress.New(stderr, "bench answer", "questions", len(ds.Questions))
	for _, q := range ds.Questions {
		res, err := p.Retrieve(ctx, q.Question, p.Defaults())
		if err != nil {
			return fmt.Errorf("bench answer: retrieve %s: %w", q.ID, err)
		}
		docs := answer.SourcesOf(res)
		if g := answer.GraphOf(res, trust); g != nil && g.Trusted {
			graph++
		}
		for i, tokens := range []int{0, f.EvidenceTokens} {
			msgs, _, _, err := a.Messages(ctx, q.Question, docs, answer.Options{EvidenceTokens: tokens})
			if err != nil {
				return err
			}
			src := ""
			if len(msgs) > 0 {
				src, _, _ = strings.Cut(msgs[len(msgs)-1].Content, "\nQuestion: ")
			}
			hit, _ := eval.AnswerRecallAt([]string{src}, q.Answers, 1)
			if i == 0 {
				hHeads, tHeads = append(hHeads, hit), append(tHeads, float64(evidence.Tokens(src)))
			} else {
				hEv, tEv = append(hEv, hit), append(tEv, float64(evidence.Tokens(src)))
			}
		}
		m.Add(1)
	}
	m.Done()
	fmt.Fprintf(stdout, "bench answer --no-reader: %d questions of %s; trusted graph answers %d\n", len(ds.Questions), f.Questions, graph)
	fmt.Fprintf(stdout, "heads: answer shown %.3f, ~%.0f tokens; evidence (%d tokens, lead %.2f, rank decay %.2f, %d docs): answer shown %.3f, ~%.0f tokens\n",
		nanMean(hHeads), nanMean(tHeads), f.EvidenceTokens, f.Evidence.Lead, f.Evidence.RankDecay, f.Evidence.Docs, nanMean(hEv), nanMean(tEv))
	return nil
}

func runAnswer(ctx context.Context, a *answer.Answerer, gen *usageGen, q eval.Question, docs []answer.Source, opts answer.Options) AnswerRun {
	gen.last = chat.Usage{}
	t := time.Now()
	ans, err := a.Answer(ctx, q.Question, docs, opts, nil)
	run := AnswerRun{AnswerMS: msSince(t), Source: ans.Source}
	if err != nil {
		run.Error = err.Error()
		return run
	}
	if ans.Source == answer.SourceReader {
		run.Usage = gen.last
	}
	run.Answer = eval.ReplyAnswer(ans.Text)
	run.EM, run.F1 = eval.ExactMatch(run.Answer, q.Answers), eval.F1(run.Answer, q.Answers)
	return run
}

func (f AnswerFlags) report(w io.Writer, reader chat.Client, _ *eval.Dataset, recs []AnswerRecord) error {
	half := ""
	if f.Half != "" {
		half = ", " + f.Half + " half"
	}
	fmt.Fprintf(w, "bench answer: %d questions of %s%s; reader %s at %s (time it freshly started: the reader restores earlier prompts from its cache)\n",
		len(recs), f.Questions, half, reader.Model, reader.BaseURL)
	type col struct {
		name string
		run  func(AnswerRecord) AnswerRun
	}
	cols := []col{{"heads (before)", func(r AnswerRecord) AnswerRun { return r.Heads }},
		{fmt.Sprintf("graph answers, evidence %d", f.EvidenceTokens), func(r AnswerRecord) AnswerRun { return r.Evidence }},
		{"default: graph answers, heads", func(r AnswerRecord) AnswerRun { return r.Default }}}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "path\tp50 s\tp95 s\tprompt tok\tread tok\treply tok\tread s\twrite s\tEM\tF1\terrors\t")
	p50 := map[string]float64{}
	f1 := map[string][]float64{}
	for _, c := range cols {
		var lat, prompt, read, reply, readS, writeS, em, f1s []float64
		errors := 0
		for _, r := range recs {
			run := c.run(r)
			if run.Error != "" {
				errors++
				em, f1s = append(em, math.NaN()), append(f1s, math.NaN())
				continue
			}
			lat = append(lat, (r.RetrieveMS+run.AnswerMS)/1000)
			em, f1s = append(em, run.EM), append(f1s, run.F1)
			if run.Source == answer.SourceReader {
				prompt = append(prompt, float64(run.Usage.PromptTokens))
				read = append(read, float64(run.Usage.PromptEvaluated))
				reply = append(reply, float64(run.Usage.CompletionTokens))
				readS, writeS = append(readS, run.Usage.PromptMS/1000), append(writeS, run.Usage.PredictedMS/1000)
			}
		}
		p50[c.name] = stats.Percentile(lat, 50)
		f1[c.name] = f1s
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.0f\t%.0f\t%.1f\t%.2f\t%.2f\t%.3f\t%.3f\t%d\t\n", c.name, p50[c.name], stats.Percentile(lat, 95),
			nanMean(prompt), nanMean(read), nanMean(reply), nanMean(readS), nanMean(writeS), nanMean(em), nanMean(f1s), errors)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "(tokens and read/write seconds are the reader's own counts, means over the answers it wrote; read tok: prompt tokens not restored from its cache)")
	var gn int
	var gHeads, gDef, gLat, rLat []float64
	for _, r := range recs {
		if r.Evidence.Source == answer.SourceGraph && r.Evidence.Error == "" {
			gn++
			gDef = append(gDef, r.Evidence.F1)
			gHeads = append(gHeads, r.Heads.F1)
			gLat = append(gLat, r.RetrieveMS+r.Evidence.AnswerMS)
		} else if r.Evidence.Error == "" {
			rLat = append(rLat, (r.RetrieveMS+r.Evidence.AnswerMS)/1000)
		}
	}
	fmt.Fprintf(w, "graph answers: %d of %d (%.0f%%), F1 %.3f against the heads reader's %.3f on the same questions, p50 %.0f ms (retrieval included); the evidence reader's answers p50 %.2f s\n",
		gn, len(recs), 100*float64(gn)/float64(max(1, len(recs))), nanMean(gDef), nanMean(gHeads), stats.Percentile(gLat, 50), stats.Percentile(rLat, 50))
	before, ev, after := cols[0].name, cols[1].name, cols[2].name
	eci := eval.PairedBootstrap(f1[ev], f1[before], f.Boot, 1)
	fmt.Fprintf(w, "F1 %s - heads: %+.3f [%+.3f, %+.3f], p50 %.2fx faster\n", ev, eci.Diff, eci.Lo, eci.Hi, p50[before]/p50[ev])
	ci := eval.PairedBootstrap(f1[after], f1[before], f.Boot, 1)
	speed := p50[before] / p50[after]
	fmt.Fprintf(w, "F1 default - heads: %+.3f [%+.3f, %+.3f] (paired bootstrap, 95%%, %d questions)\n", ci.Diff, ci.Lo, ci.Hi, ci.N)
	fmt.Fprintf(w, "answer_p50_s=%.2f answer_speedup=%.2f f1_delta=%+.3f [%+.3f, %+.3f]\n", p50[after], speed, ci.Diff, ci.Lo, ci.Hi)
	return nil
}

func nanMean(xs []float64) float64 {
	var s float64
	n := 0
	for _, x := range xs {
		if !math.IsNaN(x) {
			s += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

func writeAnswerRecords(dir string, recs []AnswerRecord) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bench answer: %w", err)
	}
	var b strings.Builder
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "per_question.jsonl"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("bench answer: %w", err)
	}
	return nil
}
