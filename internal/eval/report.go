package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// WriteReport is Write, then the report's head (up to the differences) on w
// with the line that names dir.
func WriteReport(dir string, s *Summary, recs []Record, w io.Writer) error {
	if err := Write(dir, s, recs); err != nil {
		return err
	}
	var buf bytes.Buffer
	Markdown(&buf, s, nil)
	head, _, _ := strings.Cut(buf.String(), "\n## Difference")
	fmt.Fprintf(w, "%s\nwrote %s (report.md, results.json, per_question.jsonl, plots)\n", head, dir)
	return nil
}

// Write puts report.md, results.json, per_question.jsonl and the plots in dir.
func Write(dir string, s *Summary, recs []Record) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("eval output: %w", err)
	}
	if err := writeJSONL(filepath.Join(dir, "per_question.jsonl"), recs); err != nil {
		return err
	}
	if len(s.missList) > 0 {
		if err := writeJSONL(filepath.Join(dir, "misses.jsonl"), s.missList); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("results.json: %w", err)
	}
	plots, err := Plot(dir, s, recs)
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "report.md"))
	if err != nil {
		return fmt.Errorf("report.md: %w", err)
	}
	w := bufio.NewWriter(f)
	Markdown(w, s, plots)
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("report.md: %w", err)
	}
	return f.Close()
}

// writeJSONL writes one JSON line per element of recs to path.
func writeJSONL[T any](path string, recs []T) error {
	name := filepath.Base(path)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	return f.Close()
}

// headline picks the metrics shown in the report's tables.
func headline(s *Summary) []string {
	have := map[string]bool{}
	for _, m := range s.Metrics {
		have[m] = true
	}
	// all_support differs from hit only when questions have several gold documents.
	multi := s.Dataset.MultiGold > 0
	var out []string
	for _, m := range s.Metrics {
		f, _, _ := strings.Cut(m, "@")
		switch {
		case f == "recall", f == "mrr", f == "ndcg", f == "em", f == "f1", f == "label_acc", f == "fever_score", f == "fever_score_cited":
		case f == "all_support" && multi && (strings.HasSuffix(m, "@5") || strings.HasSuffix(m, fmt.Sprintf("@%d", s.KMax))):
		case f == "answer_recall" && (strings.HasSuffix(m, "@5") || strings.HasSuffix(m, fmt.Sprintf("@%d", s.KMax))):
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// diffMetrics are the metrics whose differences the report tabulates.
func diffMetrics(s *Summary) []string {
	var out []string
	for _, m := range headline(s) {
		if m == "recall@1" || m == "recall@10" {
			continue
		}
		out = append(out, m)
	}
	return out
}

func num(v float64, ok bool) string {
	if !ok || math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.3f", v)
}

// Markdown writes the report: tables first, then notes.
func Markdown(w io.Writer, s *Summary, plots []string) {
	writeHeader(w, s)
	writeQuality(w, s)
	writeDiffs(w, s)
	writeDiffsFrom(w, s)
	writeStrata(w, s)
	writeLatency(w, s)
	writeReaderCost(w, s)
	writeLinking(w, s)
	writeMisses(w, s)
	writeEntSpread(w, s)
	writeFallbacks(w, s)
	writeNotes(w, s, plots)
}

// writeHeader names the data, the backends and the models.
func writeHeader(w io.Writer, s *Summary) {
	d := s.Dataset
	fmt.Fprintf(w, "# dmar eval: %s (%s)\n\n", d.Path, d.Format)
	fmt.Fprintf(w, "%d questions, %s setting, corpus %s", d.Questions, d.Setting, d.Corpus)
	if d.CorpusDocs > 0 {
		fmt.Fprintf(w, " (%d documents)", d.CorpusDocs)
	}
	fmt.Fprintf(w, ", graph %s, index %s, k_max %d.\n\n", d.Graph, d.Index, s.KMax)
	if len(s.Models) > 0 {
		fmt.Fprintf(w, "**Models in use:** %s.\n\n", strings.Join(s.Models, "; "))
	}
	if d.MissingGold > 0 {
		fmt.Fprintf(w, "**Warning:** %d gold document ids are not in the index; no system can retrieve them.\n\n", d.MissingGold)
	}
}

// writeQuality is the table of every system's mean of the headline metrics.
func writeQuality(w io.Writer, s *Summary) {
	fmt.Fprintf(w, "## Retrieval quality (mean over questions)\n\n")
	table(w, s, headline(s), func(sys string, m string) string {
		v, ok := s.Means[sys][m]
		return num(v, ok)
	})
}

// writeDiffs is the table of every system against the best baseline.
func writeDiffs(w io.Writer, s *Summary) {
	dm := diffMetrics(s)
	fmt.Fprintf(w, "\n## Difference against the best baseline (paired bootstrap, %s, %d resamples, seed %d)\n\n", s.Bootstrap.Confidence, s.Bootstrap.Resamples, s.Bootstrap.Seed)
	fmt.Fprintf(w, "Best baseline per metric: ")
	var bb []string
	for _, m := range dm {
		bb = append(bb, fmt.Sprintf("%s: %s", m, s.BestBaseline[m]))
	}
	fmt.Fprintf(w, "%s. `*` marks an interval that excludes 0.\n\n", strings.Join(bb, ", "))
	table(w, s, dm, func(sys, m string) string {
		ci, ok := s.Diffs[sys][m]
		if !ok {
			if s.BestBaseline[m] == sys {
				return "(best)"
			}
			return "–"
		}
		star := ""
		if ci.Significant() {
			star = "*"
		}
		return fmt.Sprintf("%+.3f [%+.3f, %+.3f]%s", ci.Diff, ci.Lo, ci.Hi, star)
	})
}

// writeDiffsFrom is each ablation against the system it starts from, with
// the p50 latency each costs: what the removed stage buys and costs.
func writeDiffsFrom(w io.Writer, s *Summary) {
	if len(s.DiffsFrom) == 0 {
		return
	}
	dm := diffMetrics(s)
	fmt.Fprintf(w, "\n## Each ablation against the system it starts from (paired bootstrap, %s)\n\n", s.Bootstrap.Confidence)
	fmt.Fprintf(w, "Negative: the removed part helped. `*` marks an interval that excludes 0. p50: the ablation's p50 latency minus its starting system's, ms.\n\n")
	fmt.Fprintf(w, "| system | from | %s | p50 |\n|---|---|%s---|\n", strings.Join(dm, " | "), strings.Repeat("---|", len(dm)))
	for _, sys := range s.Systems {
		d, ok := s.DiffsFrom[sys.Name]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "| %s | %s |", sys.Name, sys.From)
		for _, m := range dm {
			ci, ok := d[m]
			if !ok {
				fmt.Fprintf(w, " – |")
				continue
			}
			star := ""
			if ci.Significant() {
				star = "*"
			}
			fmt.Fprintf(w, " %+.3f [%+.3f, %+.3f]%s |", ci.Diff, ci.Lo, ci.Hi, star)
		}
		fmt.Fprintf(w, " %+.1f |\n", s.Latency[sys.Name].P50-s.Latency[sys.From].P50)
	}
}

// writeStrata is one table per stratum key, its values as columns.
func writeStrata(w io.Writer, s *Summary) {
	if len(s.Strata) == 0 {
		return
	}
	keys := make([]string, 0, len(s.Strata))
	for k := range s.Strata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sm := strataMetrics(s)
	fmt.Fprintf(w, "\n## By stratum (%s)\n", strings.Join(sm, " / "))
	for _, k := range keys {
		vals := make([]string, 0, len(s.Strata[k]))
		for v := range s.Strata[k] {
			vals = append(vals, v)
		}
		sort.Strings(vals)
		fmt.Fprintf(w, "\n### %s\n\n| system |", k)
		for _, v := range vals {
			fmt.Fprintf(w, " %s (n=%d) |", v, s.Strata[k][v].N)
		}
		fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(vals)))
		for _, sys := range s.Systems {
			fmt.Fprintf(w, "| %s |", sys.Name)
			for _, v := range vals {
				var cells []string
				for _, m := range sm {
					x, ok := s.Strata[k][v].Means[sys.Name][m]
					cells = append(cells, num(x, ok))
				}
				fmt.Fprintf(w, " %s |", strings.Join(cells, " / "))
			}
			fmt.Fprintln(w)
		}
	}
}

// writeLatency is the table of each system's latency, then of the DMAR
// systems' stages.
func writeLatency(w io.Writer, s *Summary) {
	fmt.Fprintf(w, "\n## Latency per question (ms; searches run one at a time on a shared machine)\n\n| system | p50 | p95 | mean |\n|---|---|---|---|\n")
	for _, sys := range s.Systems {
		l, ok := s.Latency[sys.Name]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "| %s | %.1f | %.1f | %.1f |\n", sys.Name, l.P50, l.P95, l.Mean)
	}
	stages := stageNames(s)
	if len(stages) == 0 {
		return
	}
	fmt.Fprintf(w, "\nDMAR stages, p50 / p95 ms:\n\n| system |")
	for _, st := range stages {
		fmt.Fprintf(w, " %s |", st)
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(stages)))
	for _, sys := range s.Systems {
		if s.Stages[sys.Name] == nil {
			continue
		}
		fmt.Fprintf(w, "| %s |", sys.Name)
		for _, st := range stages {
			l, ok := s.Stages[sys.Name][st]
			if !ok {
				fmt.Fprintf(w, " – |")
				continue
			}
			fmt.Fprintf(w, " %.1f / %.1f |", l.P50, l.P95)
		}
		fmt.Fprintln(w)
	}
}

// writeFallbacks is the table of what each system changes, and the
// fallbacks and errors it met.
func writeFallbacks(w io.Writer, s *Summary) {
	fmt.Fprintf(w, "\n## Fallbacks and errors (questions out of %d)\n\n| system | what it changes | fallbacks | errors |\n|---|---|---|---|\n", s.Dataset.Questions)
	for _, sys := range s.Systems {
		var fb []string
		names := make([]string, 0, len(s.Fallbacks[sys.Name]))
		for n := range s.Fallbacks[sys.Name] {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fb = append(fb, fmt.Sprintf("%s %d", n, s.Fallbacks[sys.Name][n]))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %d |\n", sys.Name, systemChange(sys), strings.Join(fb, ", "), s.Errors[sys.Name])
	}
}

// systemChange is what a system changes, for the fallbacks table.
func systemChange(sys System) string {
	switch {
	case sys.Kind == "hybrid":
		return fmt.Sprintf("hybrid search, alpha %.2f, relativeScore fusion", sys.Alpha)
	case sys.Kind == "bm25":
		return "BM25 search"
	case sys.Kind == "dense":
		return "sentence encoder + vector search"
	case sys.Name == "dmar":
		o := sys.Options
		return fmt.Sprintf("full DMAR: n=%d m=%d p=%d k=%d, stage1 %s, stage2 %s, reformulator %s, gate %s, structure %s, shapley %s", o.N, o.M, o.P, o.K, o.Stage1, o.Stage2, o.Reformulator, o.Gate, o.Structure, o.Shapley)
	}
	return sys.Ablates
}

// writeNotes lists the plots, the data set's notes and the reader.
func writeNotes(w io.Writer, s *Summary, plots []string) {
	if len(plots) > 0 {
		fmt.Fprintf(w, "\n## Plots\n\n")
		for _, p := range plots {
			fmt.Fprintf(w, "- [%s](%s): %s\n", p, p, plotCaption[p])
		}
	}
	d := s.Dataset
	if len(d.Notes) > 0 || s.Generator == "" {
		fmt.Fprintf(w, "\n## Notes\n\n")
		for _, n := range d.Notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
		if s.Generator == "" {
			fmt.Fprintf(w, "- No generator was configured: EM, F1 and label accuracy are not measured.\n")
		} else {
			fmt.Fprintf(w, "- Reader: %s.\n", s.Generator)
		}
	}
}

func strataMetrics(s *Summary) []string {
	var out []string
	for _, m := range []string{"recall@5", "ndcg@10", "answer_recall@5"} {
		for _, x := range s.Metrics {
			if x == m {
				out = append(out, m)
			}
		}
	}
	return out
}

func stageNames(s *Summary) []string {
	order := []string{"encode", "link", "recall", "subgraphs", "anchor_scoring", "reformulate", "second_stage", "rerank", "total"}
	seen := map[string]bool{}
	for _, st := range s.Stages {
		for n := range st {
			seen[n] = true
		}
	}
	var out []string
	for _, n := range order {
		if seen[n] {
			out = append(out, n)
			delete(seen, n)
		}
	}
	var rest []string
	for n := range seen {
		rest = append(rest, n)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

func table(w io.Writer, s *Summary, metrics []string, cell func(sys, m string) string) {
	fmt.Fprintf(w, "| system |")
	for _, m := range metrics {
		fmt.Fprintf(w, " %s |", m)
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(metrics)))
	for _, sys := range s.Systems {
		fmt.Fprintf(w, "| %s |", sys.Name)
		for _, m := range metrics {
			fmt.Fprintf(w, " %s |", cell(sys.Name, m))
		}
		fmt.Fprintln(w)
	}
}
