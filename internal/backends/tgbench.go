package backends

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"text/tabwriter"
	"time"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/eval"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/textgraph"
)

// TextGraphBenchFlags are dmar bench textgraph's flags.
type TextGraphBenchFlags struct {
	Dataset   string
	Extractor string
	Limit     int
	Added     float64
	Batch     int
}

// Register adds the flags to fs.
func (f *TextGraphBenchFlags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Dataset, "dataset", "hotpotqa:../shared/data/hotpotqa-100", "the corpus to build the text graph of, as a benchmark FORMAT:PATH (its corpus, as dmar eval reads it); empty: the configured corpus")
	fs.StringVar(&f.Extractor, "extractor", "spacy", "phrase extractor: spacy, heuristic")
	fs.IntVar(&f.Limit, "limit", 0, "build over the first N documents only (0: all)")
	fs.Float64Var(&f.Added, "added", 0.1, "share of the corpus new to a rebuild: the cache is filled from the rest first, then the whole corpus is built from it (a corpus that gained documents)")
	fs.IntVar(&f.Batch, "batch", 512, "documents per batch, as the load takes them")
}

// tgRun is one timed build.
type tgRun struct {
	name     string
	seconds  float64
	cpu      float64 // dmar's CPU seconds and the extractor's process's
	embedded int     // labels the encoder embedded
	m        *textgraph.Memory
}

// countingEncoder counts the texts its encoder embeds, through the corpus
// path when the encoder has one, as the builder would call it.
type countingEncoder struct {
	corpusEncoderOf
	n *int
}

type corpusEncoderOf interface {
	Encode(ctx context.Context, texts []string) ([][]float32, error)
	EncodeCorpus(ctx context.Context, texts []string, m *progress.Meter) ([][]float32, error)
	Dim() int
	Version() string
}

func (c countingEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	*c.n += len(texts)
	return c.corpusEncoderOf.Encode(ctx, texts)
}

func (c countingEncoder) EncodeCorpus(ctx context.Context, texts []string, m *progress.Meter) ([][]float32, error) {
	*c.n += len(texts)
	return c.corpusEncoderOf.EncodeCorpus(ctx, texts, m)
}

// RunTextGraphBench runs dmar bench textgraph: the text graph of a corpus
// built, in one run, as the load built it before (a Put of each batch: the
// extractor, then the encoder, in turn; every new node's label embedded),
// as it builds it now (the next batch extracted while one is embedded; each
// label embedded once, through the vector cache) with an empty cache, and
// again with the cache filled from all but --added of the corpus. Every
// build must give the same graph. Progress lines (rate, ETA) go to stderr.
func RunTextGraphBench(ctx context.Context, cfg config.Config, f TextGraphBenchFlags, stdout, stderr io.Writer, log *slog.Logger) error {
	if f.Added < 0 || f.Added > 1 {
		return fmt.Errorf("bench textgraph: --added %g: want a share from 0 to 1", f.Added)
	}
	if f.Batch < 1 {
		return fmt.Errorf("bench textgraph: --batch %d: want at least 1", f.Batch)
	}
	tb, err := openTGBench(ctx, cfg, f, stderr, log)
	if err != nil {
		return err
	}
	defer tb.close()
	fmt.Fprintf(stdout, "text graph of %d documents (%s), extractor %s, encoder %s, batches of %d\n\n", len(tb.docs), f.Dataset, tb.exKey, tb.enc.Version(), f.Batch)
	if err := tb.singleProcess(ctx); err != nil {
		return err
	}
	before, err := tb.timed("before: Put by batch", tb.putByBatch(ctx))
	if err != nil {
		return err
	}
	after, err := tb.timed("after: PutAll, empty cache", tb.putAll(ctx, "after", textgraph.NewVectors(tb.enc.Version())))
	if err != nil {
		return err
	}
	warm, err := tb.warmCache(ctx)
	if err != nil {
		return err
	}
	filled, err := tb.timed(fmt.Sprintf("after: PutAll, cache of %d%% of the corpus", int(math.Round(100*(1-f.Added)))), tb.putAll(ctx, "rebuild", warm))
	if err != nil {
		return err
	}
	return tgReport(stdout, len(tb.docs), before, after, filled)
}

// tgBench is what the builds share: the extractor, the counted encoder,
// the linked documents, and the builder that holds them.
type tgBench struct {
	f        TextGraphBenchFlags
	stderr   io.Writer
	ex       textgraph.Extractor
	exKey    string
	enc      corpusEncoderOf
	docs     []retrieval.Document
	b        textgraph.Builder
	one      textgraph.Builder // b as before: spaCy as one process
	embedded int
	closers  []func()
}

// openTGBench opens the extractor, the models and the graph, links the
// documents, and starts the extractor's processes before any clock does (a
// warm-up batch for each). On an error it closes what it opened.
func openTGBench(ctx context.Context, cfg config.Config, f TextGraphBenchFlags, stderr io.Writer, log *slog.Logger) (_ *tgBench, err error) {
	tb := &tgBench{f: f, stderr: stderr}
	defer func() {
		if err != nil {
			tb.close()
		}
	}()
	cfg.TextGraph.Extractor = f.Extractor
	if tb.ex, tb.exKey, err = Extractor(cfg); err != nil {
		return nil, err
	}
	if tb.ex == nil {
		return nil, fmt.Errorf("bench textgraph: --extractor: name one (spacy, heuristic)")
	}
	if c, ok := tb.ex.(io.Closer); ok {
		tb.closers = append(tb.closers, func() { _ = c.Close() })
	}
	mods, err := OpenModels(cfg, log)
	if err != nil {
		return nil, err
	}
	tb.closers = append(tb.closers, mods.Close)
	var ok bool
	if tb.enc, ok = any(mods.DocEncoder).(corpusEncoderOf); !ok {
		return nil, fmt.Errorf("bench textgraph: the document encoder has no corpus path")
	}
	g, _, err := Inputs(cfg, stderr).Graph(ctx)
	if err != nil {
		return nil, err
	}
	if tb.docs, err = tgBenchDocs(ctx, cfg, f, g); err != nil {
		return nil, err
	}
	tb.b = textgraph.Builder{Extractor: tb.ex, Linker: g, KG: g, Encoder: countingEncoder{tb.enc, &tb.embedded}}
	tb.one = tb.b
	if _, err := tb.ex.Extract(ctx, warmUp(4*64)); err != nil {
		return nil, err
	}
	return tb, nil
}

// warmUp is a batch of n warm-up passages.
func warmUp(n int) []textgraph.Passage {
	ps := make([]textgraph.Passage, n)
	for i := range ps {
		ps[i] = textgraph.Passage{ID: "warm-up", Text: "A warm-up sentence about Paris."}
	}
	return ps
}

// close closes what openTGBench opened, last first.
func (tb *tgBench) close() {
	for i := len(tb.closers) - 1; i >= 0; i-- {
		tb.closers[i]()
	}
}

// singleProcess makes the before build's extractor one spaCy process, as
// spaCy ran before, started (and warmed up) here.
func (tb *tgBench) singleProcess(ctx context.Context) error {
	sp, ok := tb.ex.(*textgraph.Spacy)
	if !ok || sp.Processes <= 1 {
		return nil
	}
	sp1 := &textgraph.Spacy{Python: sp.Python}
	tb.closers = append(tb.closers, func() { _ = sp1.Close() })
	if _, err := sp1.Extract(ctx, warmUp(1)); err != nil {
		return err
	}
	tb.one.Extractor = sp1
	return nil
}

// cpu is dmar's CPU time and every extractor process's.
func (tb *tgBench) cpu() float64 {
	s := textgraph.CPUSeconds(tb.ex)
	if c, ok := tb.one.Extractor.(interface{ CPUSeconds() float64 }); ok && tb.one.Extractor != tb.ex {
		s += c.CPUSeconds()
	}
	return s
}

// timed runs one build into a new graph, timed and counted.
func (tb *tgBench) timed(name string, build func(*textgraph.Memory) error) (tgRun, error) {
	tb.embedded = 0
	m := textgraph.NewMemory()
	t, cpu0 := time.Now(), tb.cpu()
	if err := build(m); err != nil {
		return tgRun{}, fmt.Errorf("bench textgraph: %s: %w", name, err)
	}
	return tgRun{name: name, seconds: time.Since(t).Seconds(), cpu: tb.cpu() - cpu0, embedded: tb.embedded, m: m}, nil
}

func (tb *tgBench) meter(name string) *progress.Meter {
	return progress.New(tb.stderr, "text graph, "+name, "documents", len(tb.docs))
}

// putByBatch is the build as the load did it before: a Put of each batch.
func (tb *tgBench) putByBatch(ctx context.Context) func(*textgraph.Memory) error {
	return func(m *textgraph.Memory) error {
		pm := tb.meter("before")
		for lo := 0; lo < len(tb.docs); lo += tb.f.Batch {
			part := tb.docs[lo:min(lo+tb.f.Batch, len(tb.docs))]
			if err := m.Put(ctx, tb.one, part); err != nil {
				return err
			}
			pm.Add(len(part))
		}
		pm.Done()
		return nil
	}
}

// putAll is the build as the load does it now, through the vector cache v.
func (tb *tgBench) putAll(ctx context.Context, name string, v *textgraph.Vectors) func(*textgraph.Memory) error {
	b := tb.b
	b.Vectors = v
	return func(m *textgraph.Memory) error {
		pm := tb.meter(name)
		defer pm.Done()
		return m.PutAll(ctx, b, tb.docs, tb.f.Batch, pm)
	}
}

// warmCache is a vector cache holding the labels of all but --added of the
// corpus (an untimed build of them), as the state folder does after the
// earlier load of a corpus that has since gained documents.
func (tb *tgBench) warmCache(ctx context.Context) (*textgraph.Vectors, error) {
	b := tb.b
	b.Vectors = textgraph.NewVectors(tb.enc.Version())
	old := tb.docs[:len(tb.docs)-int(math.Round(tb.f.Added*float64(len(tb.docs))))]
	if err := textgraph.NewMemory().PutAll(ctx, b, old, tb.f.Batch, nil); err != nil {
		return nil, err
	}
	return b.Vectors, nil
}

// tgReport writes the table and the closing lines, and fails when a build
// of today's gave another graph than before's.
func tgReport(stdout io.Writer, n int, before, after, filled tgRun) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "build\tseconds\tdocuments/s\tCPU s\tdocuments/CPU s\tlabels embedded\tnodes\tedges")
	for _, r := range []tgRun{before, after, filled} {
		s := r.m.Stats()
		edges := 0
		for _, k := range s.Edges {
			edges += k
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%d\t%d\n", r.name, r.seconds, float64(n)/r.seconds, r.cpu, float64(n)/r.cpu, r.embedded, s.Passages+s.Phrases+s.Entities, edges)
	}
	tw.Flush()
	for _, r := range []tgRun{after, filled} {
		if d := graphDiff(before.m, r.m); d != "" {
			return fmt.Errorf("bench textgraph: %q built another graph than %q: %s", r.name, before.name, d)
		}
	}
	fmt.Fprintf(stdout, "\nthe same graph from all three builds (nodes, labels, vectors and edges; vectors and weights within 1e-5)\n")
	fmt.Fprintf(stdout, "textgraph_docs_per_s before=%.1f after=%.1f rebuilt=%.1f\n",
		float64(n)/before.seconds, float64(n)/after.seconds, float64(n)/filled.seconds)
	fmt.Fprintf(stdout, "textgraph_docs_per_cpu_s before=%.1f after=%.1f rebuilt=%.1f\n",
		float64(n)/before.cpu, float64(n)/after.cpu, float64(n)/filled.cpu)
	return nil
}

// tgBenchDocs are the bench's documents, linked with g as a load links
// them: the benchmark's corpus, or the configured one.
func tgBenchDocs(ctx context.Context, cfg config.Config, f TextGraphBenchFlags, g kg.Graph) ([]retrieval.Document, error) {
	var docs []retrieval.Document
	if f.Dataset != "" {
		ds, err := eval.Open(f.Dataset, 0)
		if err != nil {
			return nil, err
		}
		if len(ds.Corpus) == 0 {
			return nil, fmt.Errorf("bench textgraph: --dataset %s brings no corpus", f.Dataset)
		}
		docs = ds.Corpus
	} else {
		var err error
		if docs, _, err = corpus.ReadFile(ctx, cfg.CorpusFile()); err != nil {
			return nil, err
		}
	}
	if f.Limit > 0 {
		docs = docs[:min(f.Limit, len(docs))]
	}
	for i := range docs {
		if err := corpus.Link(ctx, g, &docs[i]); err != nil {
			return nil, err
		}
	}
	return docs, nil
}

// graphDiff names the first difference between two graphs' nodes and edges
// ("" when none); edge weights may differ by float rounding (a label's
// vector from another batch of the encoder).
func graphDiff(a, b *textgraph.Memory) string {
	na, ea := a.Export()
	nb, eb := b.Export()
	if len(na) != len(nb) {
		return fmt.Sprintf("%d nodes against %d", len(nb), len(na))
	}
	for i := range na {
		x, y := na[i], nb[i]
		if x.Key != y.Key || x.Label != y.Label || x.Passages != y.Passages || len(x.Vector) != len(y.Vector) {
			return fmt.Sprintf("node %d: %s %q (%d passages) against %s %q (%d)", i, y.Key, y.Label, y.Passages, x.Key, x.Label, x.Passages)
		}
		for j := range x.Vector {
			if math.Abs(float64(x.Vector[j]-y.Vector[j])) > 1e-5 {
				return fmt.Sprintf("node %s: its vector differs at %d by %g", x.Key, j, x.Vector[j]-y.Vector[j])
			}
		}
	}
	if len(ea) != len(eb) {
		return fmt.Sprintf("%d edges against %d", len(eb), len(ea))
	}
	for i := range ea {
		x, y := ea[i], eb[i]
		w := x.W - y.W
		x.W, y.W = 0, 0
		if x != y || math.Abs(w) > 1e-5 {
			return fmt.Sprintf("edge %d: %+v against %+v", i, eb[i], ea[i])
		}
	}
	return ""
}
