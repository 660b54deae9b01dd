package eval

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"

	"github.com/dmar-kg/dmar/internal/textgraph"
)

// ExtractorScore is how one extractor's phrases compare with a peer's
// extraction over the same passages (micro-averaged over phrase keys,
// textgraph.Key), and what it cost.
type ExtractorScore struct {
	Name string `json:"name"`
	// Named: the extractor's named entities against the peer's.
	NamedP, NamedR, NamedF1 float64
	// All: every phrase it found against the peer's triples' subjects and
	// objects.
	AllP, AllR, AllF1 float64
	Passages          int
	PhrasesPerPassage float64
	DocsPerSecond     float64
	Seconds           float64
	// CPUSeconds is the CPU time the extraction took, dmar's and the
	// extractor's own process's: on a shared machine, passages per CPU
	// second says what an idle core would do.
	CPUSeconds float64
	// HeapMB is the Go heap the extraction's results hold; ProcessMB the
	// peak resident memory of the extractor's own process (spaCy's), 0 for
	// an extractor that runs in dmar.
	HeapMB, ProcessMB float64
}

// CompareExtractors runs each extractor over ps and scores it against gold
// (the passages gold does not hold are left out of both).
func CompareExtractors(ctx context.Context, ps []textgraph.Passage, gold *textgraph.OpenIE, exs []textgraph.Extractor) ([]ExtractorScore, error) {
	var held []textgraph.Passage
	var golds []textgraph.Gold
	for _, p := range ps {
		if g, ok := gold.GoldOf(p); ok {
			held = append(held, p)
			golds = append(golds, g)
		}
	}
	if len(held) == 0 {
		return nil, fmt.Errorf("the peer's extraction holds none of the %d passages", len(ps))
	}
	var out []ExtractorScore
	for _, ex := range exs {
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		start, cpu0 := time.Now(), textgraph.CPUSeconds(ex)
		got, err := ex.Extract(ctx, held)
		if err != nil {
			return nil, fmt.Errorf("extractor %s: %w", ex.Name(), err)
		}
		secs := time.Since(start).Seconds()
		cpu := textgraph.CPUSeconds(ex) - cpu0
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		s := ExtractorScore{Name: ex.Name(), Passages: len(held), Seconds: secs, DocsPerSecond: float64(len(held)) / secs,
			HeapMB: float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20), CPUSeconds: cpu}
		if pr, ok := ex.(interface{ PeakRSS() int64 }); ok {
			s.ProcessMB = float64(pr.PeakRSS()) / (1 << 20)
		}
		var named, all, goldNamed, goldArgs, hitNamed, hitAll, phrases int
		for i, e := range got {
			g := golds[i]
			seenN, seenA := map[string]bool{}, map[string]bool{}
			for _, ph := range e.Phrases {
				k := textgraph.Key(ph.Text)
				if k == "" {
					continue
				}
				phrases++
				if ph.Kind == textgraph.Named && !seenN[k] {
					seenN[k] = true
					named++
					if g.Entities[k] {
						hitNamed++
					}
				}
				if !seenA[k] {
					seenA[k] = true
					all++
					if g.Arguments[k] {
						hitAll++
					}
				}
			}
			goldNamed += len(g.Entities)
			goldArgs += len(g.Arguments)
		}
		s.PhrasesPerPassage = float64(phrases) / float64(len(held))
		s.NamedP, s.NamedR, s.NamedF1 = prf(hitNamed, named, goldNamed)
		s.AllP, s.AllR, s.AllF1 = prf(hitAll, all, goldArgs)
		out = append(out, s)
	}
	return out, nil
}

func prf(hit, pred, gold int) (p, r, f float64) {
	if pred > 0 {
		p = float64(hit) / float64(pred)
	}
	if gold > 0 {
		r = float64(hit) / float64(gold)
	}
	if p+r > 0 {
		f = 2 * p * r / (p + r)
	}
	return p, r, f
}

// WriteExtractorScores prints the comparison as a Markdown table.
func WriteExtractorScores(w io.Writer, scores []ExtractorScore) {
	fmt.Fprintln(w, "| extractor | named P / R / F1 (vs the peer's entities) | all phrases P / R / F1 (vs its triples' arguments) | phrases / passage | passages / s (wall) | passages / CPU s | Go heap MB | process peak MB |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, s := range scores {
		perCPU := "-"
		if s.CPUSeconds > 0 {
			perCPU = strconv.FormatFloat(float64(s.Passages)/s.CPUSeconds, 'f', 1, 64)
		}
		fmt.Fprintf(w, "| %s | %.3f / %.3f / %.3f | %.3f / %.3f / %.3f | %.1f | %.1f | %s | %.1f | %s |\n", s.Name, s.NamedP, s.NamedR, s.NamedF1,
			s.AllP, s.AllR, s.AllF1, s.PhrasesPerPassage, s.DocsPerSecond, perCPU, s.HeapMB, mb(s.ProcessMB))
	}
}

func mb(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// ExtractorFlags are dmar textgraph compare's flags (Register); Run reads
// the dataset's passages and the peer's extraction and prints the table.
type ExtractorFlags struct {
	dataset, openie, extractors, python string
	limit                               int
}

// Register adds f's flags to fs; python is the configured interpreter of
// spaCy's environment.
func (f *ExtractorFlags) Register(fs *flag.FlagSet, python string) {
	fs.StringVar(&f.dataset, "dataset", "musique:../shared/data/musique-100", "FORMAT:PATH of a benchmark that brings its passages (musique, hotpotqa)")
	fs.StringVar(&f.openie, "openie", "../shared/data/musique-100/hipporag-openie-gpt-3.5-turbo-1106.json", "the peer's extraction (HippoRAG's OpenIE JSON) to compare with")
	fs.StringVar(&f.extractors, "extractors", "heuristic,spacy", "comma-separated extractors: heuristic, spacy")
	fs.StringVar(&f.python, "python", python, "interpreter of spaCy's environment (textgraph.python)")
	fs.IntVar(&f.limit, "limit", 0, "only the first N passages (0: all)")
}

// Run compares the extractors and prints the table on w.
func (f *ExtractorFlags) Run(ctx context.Context, w io.Writer) error {
	ds, err := Open(f.dataset, 0)
	if err != nil {
		return errs.E(errs.Invalid, "textgraph compare: %s", err)
	}
	if len(ds.Corpus) == 0 {
		return errs.E(errs.Invalid, "textgraph compare: %s brings no passages", f.dataset)
	}
	gold, err := textgraph.ReadOpenIE(f.openie)
	if err != nil {
		return errs.E(errs.Invalid, "textgraph compare: %s", err)
	}
	var exs []textgraph.Extractor
	var spacies []*textgraph.Spacy // closed when the comparison ends
	defer func() {
		for _, sp := range spacies {
			sp.Close()
		}
	}()
	for _, name := range strings.Split(f.extractors, ",") {
		switch strings.TrimSpace(name) {
		case "heuristic":
			exs = append(exs, textgraph.Heuristic{})
		case "spacy":
			sp := &textgraph.Spacy{Python: f.python}
			spacies = append(spacies, sp)
			exs = append(exs, sp)
		default:
			return errs.E(errs.Invalid, "textgraph compare: unknown extractor %q (heuristic, spacy)", name)
		}
	}
	ps := make([]textgraph.Passage, 0, len(ds.Corpus))
	for _, d := range ds.Corpus {
		ps = append(ps, textgraph.Passage{ID: d.ID, Title: d.Title, Text: d.Text})
	}
	if f.limit > 0 && f.limit < len(ps) {
		ps = ps[:f.limit]
	}
	scores, err := CompareExtractors(ctx, ps, gold, exs)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%d passages of %s against %s (phrase keys: textgraph.Key)\n\n", scores[0].Passages, f.dataset, f.openie)
	WriteExtractorScores(w, scores)
	return nil
}
