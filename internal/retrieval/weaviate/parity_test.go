package weaviate

import (
	"context"
	"fmt"
	"github.com/dmar-kg/dmar/internal/retrieval/retrievaltest"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
)

// flushWait covers PERSISTENCE_MEMTABLES_FLUSH_DIRTY_AFTER_SECONDS=5 (set by
// scripts/services/weaviate.sh): until memtables flush, BM25 and hybrid are
// far slower, and timings would measure that.
const flushWait = 8 * time.Second

// TestParityCodexm compares the embedded index's rankings with Weaviate's on
// the real corpora and the kgqa dev questions, and prints the report of
// docs/weaviate.md:
//
//	DMAR_PARITY=1 DMAR_WEAVIATE_URL=http://127.0.0.1:8080 \
//	  go test -run TestParityCodexm -v -timeout 30m ./internal/retrieval/weaviate/
//
// Each mode is run against the embedded index with exact BM25 sums and with
// memindex.Params.WeaviateTopK ("+topK", Weaviate's per-field candidate cut
// copied, the default). BM25 runs over codexm; vector and hybrid search need real document
// vectors, so they run over codexm when its vectors are cached
// (DMAR_PARITY_ENCODE=1 makes them) and over codexm-film (244 documents,
// encoded on the fly) always. It fails only if the two disagree badly (mean
// BM25 overlap@10 under 0.75), so that a regression in either is caught.
func TestParityCodexm(t *testing.T) {
	needParity(t)
	var report strings.Builder
	for _, c := range []*codexm{loadCodexm(t), loadFixture(t, "codexm-film", true)} {
		parity(t, c, &report)
	}
	t.Log("\n" + report.String())
	if p := os.Getenv("DMAR_PARITY_OUT"); p != "" {
		if err := os.WriteFile(p, []byte(report.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

func parity(t *testing.T, c *codexm, report *strings.Builder) {
	ctx := context.Background()
	noCut := memindex.DefaultParams()
	noCut.WeaviateTopK = false
	exact := memindex.New(noCut)
	cut := memindex.DefaultParams()
	cut.WeaviateTopK = true
	copied := memindex.New(cut)
	for _, x := range []*memindex.Index{exact, copied} {
		if err := x.Put(ctx, c.docs); err != nil {
			t.Fatal(err)
		}
	}
	wv := loadParityClass(t, c.name, c.docs, false)

	type mode struct {
		name string
		q    func(i int) retrieval.Query
	}
	modes := []mode{
		{"bm25", func(i int) retrieval.Query {
			return retrieval.Query{Mode: retrieval.BM25, Text: c.questions[i], Limit: 10}
		}},
		{"bm25 n=100 (ovl@100)", func(i int) retrieval.Query {
			return retrieval.Query{Mode: retrieval.BM25, Text: c.questions[i], Limit: 100}
		}},
	}
	if c.docVecs {
		modes = append(modes,
			mode{"vector", func(i int) retrieval.Query {
				return retrieval.Query{Mode: retrieval.Vector, Vector: c.qvecs[i], Limit: 10}
			}},
			mode{"hybrid relativeScore a=0.5", func(i int) retrieval.Query {
				return retrieval.Query{Mode: retrieval.Hybrid, Text: c.questions[i], Vector: c.qvecs[i], Alpha: 0.5, Fusion: retrieval.RelativeScore, Limit: 10}
			}},
			mode{"hybrid rankedFusion a=0.5", func(i int) retrieval.Query {
				return retrieval.Query{Mode: retrieval.Hybrid, Text: c.questions[i], Vector: c.qvecs[i], Alpha: 0.5, Fusion: retrieval.RankedFusion, Limit: 10}
			}},
		)
	}
	vecs := "no document vectors: BM25 only"
	if c.docVecs {
		vecs = "real " + c.encoder + " vectors"
	}
	fmt.Fprintf(report, "\n%s (%d docs) x kgqa dev (%d questions), %s\n", c.name, len(c.docs), len(c.questions), vecs)
	fmt.Fprintf(report, "%-28s %9s %9s %9s %9s %10s %12s\n", "mode", "ovl@10", "min ovl", "tau", "min tau", "identical", "max |dscore|")
	for _, mm := range modes {
		for _, variant := range []struct {
			suffix string
			mem    *memindex.Index
		}{{"", exact}, {" +topK", copied}} {
			m, mem := mm, variant.mem
			m.name += variant.suffix
			if m.name == "vector +topK" {
				continue // no BM25 in it
			}
			var ovl, tau []float64
			identical := 0
			maxDiff := 0.0
			worst, worstOvl, worstTau := -1, 2.0, 2.0
			for i := range c.questions {
				q := m.q(i)
				a, b := retrievaltest.Searches(ctx, t, mem, wv, q)
				o, k := overlap(a, b), kendallTau(a, b)
				ovl, tau = append(ovl, o), append(tau, k)
				if sameIDs(a, b) {
					identical++
				}
				if o < worstOvl || o == worstOvl && k < worstTau {
					worst, worstOvl, worstTau = i, o, k
				}
				maxDiff = math.Max(maxDiff, scoreDiff(a, b))
			}
			fmt.Fprintf(report, "%-28s %9.4f %9.2f %9.4f %9.2f %6d/%-3d %12.2g\n", m.name, mean(ovl), minOf(ovl), mean(tau), minOf(tau), identical, len(c.questions), maxDiff)
			if worst >= 0 && identical < len(c.questions) {
				a, _ := mem.Search(ctx, m.q(worst))
				b, _ := wv.Search(ctx, m.q(worst))
				fmt.Fprintf(report, "  worst: %q\n%s", c.questions[worst], sideBySide(a, b))
			}
			if m.name == "bm25" && mean(ovl) < 0.75 {
				t.Errorf("%s: bm25 mean overlap@10 %.3f < 0.75: the embedded index no longer scores like Weaviate", c.name, mean(ovl))
			}
		}
	}
}

// loadParityClass returns a collection holding docs; fresh drops and
// reloads it (logging the import rate), else an existing complete one is
// reused.
func loadParityClass(tb testing.TB, name string, docs []retrieval.Document, fresh bool) *Store {
	tb.Helper()
	ctx := context.Background()
	class := "Parity"
	for _, part := range strings.Split(name, "-") {
		if part != "" {
			class += strings.ToUpper(part[:1]) + part[1:]
		}
	}
	open := func() *Store {
		s, err := New(ctx, Config{URL: serverURL(tb), Class: class, GRPC: grpcAddr(), Create: true})
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}
	s := open()
	if !fresh {
		if n, err := s.Count(ctx); err == nil && n == len(docs) {
			ds, err := s.Documents(ctx, []string{docs[0].ID})
			if err == nil && len(ds) == 1 && ds[0].Text == docs[0].Text && slices.Equal(ds[0].Vector, docs[0].Vector) {
				return s
			}
		}
	}
	if err := s.Drop(ctx); err != nil {
		tb.Fatal(err)
	}
	s = open()
	start := time.Now()
	st, err := s.Load(ctx, docs, os.Stderr)
	if err != nil {
		tb.Fatal(err)
	}
	el := time.Since(start)
	tb.Logf("weaviate import of %s: %d read, %d imported, %d skipped in %v: %.0f objects/s (batch %d, grpc %q)",
		name, st.Read, st.Imported, st.Skipped, el.Round(time.Millisecond), float64(st.Imported)/el.Seconds(), s.cfg.BatchSize, s.cfg.GRPC)
	if st.Skipped > 0 {
		tb.Fatalf("skipped %d: %v", st.Skipped, st.Problems)
	}
	time.Sleep(flushWait)
	return s
}

// overlap is |A ∩ B| / max(|A|, |B|) over two hit lists (1 when both are
// empty): overlap@10 for lists cut at 10.
func overlap(a, b []retrieval.Hit) float64 {
	n := max(len(a), len(b))
	if n == 0 {
		return 1
	}
	in := map[string]bool{}
	for _, h := range a {
		in[h.Doc.ID] = true
	}
	k := 0
	for _, h := range b {
		if in[h.Doc.ID] {
			k++
		}
	}
	return float64(k) / float64(n)
}

// kendallTau is Kendall's tau-b between two top-k lists over the union of
// their documents, a document missing from a list being tied after that
// list's last rank; 1 for identical lists (and for two empty ones).
func kendallTau(a, b []retrieval.Hit) float64 {
	rank := func(hs []retrieval.Hit) map[string]int {
		r := map[string]int{}
		for i, h := range hs {
			r[h.Doc.ID] = i
		}
		return r
	}
	ra, rb := rank(a), rank(b)
	var ids []string
	seen := map[string]bool{}
	for _, hs := range [][]retrieval.Hit{a, b} {
		for _, h := range hs {
			if !seen[h.Doc.ID] {
				seen[h.Doc.ID] = true
				ids = append(ids, h.Doc.ID)
			}
		}
	}
	get := func(r map[string]int, n int, id string) int {
		if v, ok := r[id]; ok {
			return v
		}
		return n // tied after the last rank
	}
	var conc, disc, tieA, tieB float64
	for i := 0; i < len(ids); i++ {
		for j := i + 1; j < len(ids); j++ {
			da := get(ra, len(a), ids[i]) - get(ra, len(a), ids[j])
			db := get(rb, len(b), ids[i]) - get(rb, len(b), ids[j])
			switch {
			case da == 0 && db == 0:
			case da == 0:
				tieA++
			case db == 0:
				tieB++
			case (da > 0) == (db > 0):
				conc++
			default:
				disc++
			}
		}
	}
	den := math.Sqrt((conc + disc + tieA) * (conc + disc + tieB))
	if den == 0 {
		return 1
	}
	return (conc - disc) / den
}

func sameIDs(a, b []retrieval.Hit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Doc.ID != b[i].Doc.ID {
			return false
		}
	}
	return true
}

// scoreDiff is the largest relative score difference over the documents
// both lists hold.
func scoreDiff(a, b []retrieval.Hit) float64 {
	sb := map[string]float64{}
	for _, h := range b {
		sb[h.Doc.ID] = h.Score
	}
	d := 0.0
	for _, h := range a {
		if s, ok := sb[h.Doc.ID]; ok {
			d = math.Max(d, math.Abs(h.Score-s)/math.Max(math.Abs(s), 1e-9))
		}
	}
	return d
}

// sideBySide prints the first 10 hits of both lists.
func sideBySide(a, b []retrieval.Hit) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "    %-3s %-34s %-34s\n", "#", "embedded (id score)", "weaviate (id score)")
	for i := 0; i < min(max(len(a), len(b)), 10); i++ {
		cell := func(hs []retrieval.Hit) string {
			if i >= len(hs) {
				return ""
			}
			return fmt.Sprintf("%s %.6f", hs[i].Doc.ID, hs[i].Score)
		}
		fmt.Fprintf(&sb, "    %-3d %-34s %-34s\n", i+1, cell(a), cell(b))
	}
	return sb.String()
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(max(len(xs), 1))
}

func minOf(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}
