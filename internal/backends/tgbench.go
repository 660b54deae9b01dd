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
	cfg.TextGraph.Extractor = f.Extractor
	ex, exKey, err := Extractor(cfg)
	if err != nil {
		return err
	}
	if ex == nil {
		return fmt.Errorf("bench textgraph: --extractor: name one (spacy, heuristic)")
	}
	if c, ok := ex.(io.Closer); ok {
		defer c.Close()
	}
	mods, err := OpenModels(cfg, log)
	if err != nil {
		return err
	}
	defer mods.Close()
	enc, ok := any(mods.DocEncoder).(corpusEncoderOf)
	if !ok {
		return fmt.Errorf("bench textgraph: the document encoder has no corpus path")
	}
	g, _, err := Inputs(cfg, stderr).Graph(ctx)
	if err != nil {
		return err
	}
	docs, err := tgBenchDocs(ctx, cfg, f, g)
	if err != nil {
		return err
	}
	var embedded int
	b := textgraph.Builder{Extractor: ex, Linker: g, KG: g, Encoder: countingEncoder{enc, &embedded}}
	// The extractor's processes start before the clock does (a batch for
	// each).
	warmUp := make([]textgraph.Passage, 4*64)
	for i := range warmUp {
		warmUp[i] = textgraph.Passage{ID: "warm-up", Text: "A warm-up sentence about Paris."}
	}
	if _, err := ex.Extract(ctx, warmUp); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "text graph of %d documents (%s), extractor %s, encoder %s, batches of %d\n\n", len(docs), f.Dataset, exKey, enc.Version(), f.Batch)

	meter := func(name string) *progress.Meter {
		return progress.New(stderr, "text graph, "+name, "documents", len(docs))
	}
	// Before, spaCy ran as one process.
	one := b
	if sp, ok := ex.(*textgraph.Spacy); ok && sp.Processes > 1 {
		sp1 := &textgraph.Spacy{Python: sp.Python}
		defer sp1.Close()
		if _, err := sp1.Extract(ctx, warmUp[:1]); err != nil {
			return err
		}
		one.Extractor = sp1
	}
	// dmar's CPU time and every extractor process's.
	cpu := func() float64 {
		s := textgraph.CPUSeconds(ex)
		if c, ok := one.Extractor.(interface{ CPUSeconds() float64 }); ok && one.Extractor != ex {
			s += c.CPUSeconds()
		}
		return s
	}
	timed := func(name string, build func(*textgraph.Memory) error) (tgRun, error) {
		embedded = 0
		m := textgraph.NewMemory()
		t, cpu0 := time.Now(), cpu()
		if err := build(m); err != nil {
			return tgRun{}, fmt.Errorf("bench textgraph: %s: %w", name, err)
		}
		return tgRun{name: name, seconds: time.Since(t).Seconds(), cpu: cpu() - cpu0, embedded: embedded, m: m}, nil
	}
	before, err := timed("before: Put by batch", func(m *textgraph.Memory) error {
		pm := meter("before")
		for lo := 0; lo < len(docs); lo += f.Batch {
			part := docs[lo:min(lo+f.Batch, len(docs))]
			if err := m.Put(ctx, one, part); err != nil {
				return err
			}
			pm.Add(len(part))
		}
		pm.Done()
		return nil
	})
	if err != nil {
		return err
	}
	cold := b
	cold.Vectors = textgraph.NewVectors(enc.Version())
	after, err := timed("after: PutAll, empty cache", func(m *textgraph.Memory) error {
		pm := meter("after")
		defer pm.Done()
		return m.PutAll(ctx, cold, docs, f.Batch, pm)
	})
	if err != nil {
		return err
	}
	// A corpus that gained --added of its documents: the cache holds the
	// labels of the rest (an untimed build of them), as the state folder
	// does after the earlier load.
	warm := b
	warm.Vectors = textgraph.NewVectors(enc.Version())
	old := docs[:len(docs)-int(math.Round(f.Added*float64(len(docs))))]
	if err := textgraph.NewMemory().PutAll(ctx, warm, old, f.Batch, nil); err != nil {
		return err
	}
	filled, err := timed(fmt.Sprintf("after: PutAll, cache of %d%% of the corpus", int(math.Round(100*(1-f.Added)))), func(m *textgraph.Memory) error {
		pm := meter("rebuild")
		defer pm.Done()
		return m.PutAll(ctx, warm, docs, f.Batch, pm)
	})
	if err != nil {
		return err
	}

	return tgReport(stdout, len(docs), before, after, filled)
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
