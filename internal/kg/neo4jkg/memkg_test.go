package neo4jkg_test

import (
	"context"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/datapath/datatest"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
)

// Tests and benchmarks comparing Neo4j with the embedded graph on codexm.
// This file sorts after kgtest_test.go, whose last test leaves codexm loaded.

func codexm(t testing.TB) (*neo4jkg.Store, *memkg.Graph, []kg.Entity) {
	t.Helper()
	if testing.Short() {
		t.Skip("full codexm in -short mode")
	}
	s, dir := holding(t, "codexm")
	b, err := bundle.Read(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, memkg.FromBundle(b), b.Entities
}

// kgqaQuestions returns the dev questions' text and topic QIDs.
func kgqaQuestions(t testing.TB) (questions, topics []string) {
	t.Helper()
	root, err := datapath.Root()
	if err != nil {
		t.Fatal(err)
	}
	type question struct {
		Question string   `json:"question"`
		Topics   []string `json:"topic_qids"`
	}
	for _, q := range datatest.JSONL[question](t, filepath.Join(root, "kgqa", "dev.jsonl"), 0) {
		questions = append(questions, q.Question)
		topics = append(topics, q.Topics...)
	}
	return questions, topics
}

// spread picks n entities evenly across QID order.
func spread(es []kg.Entity, n int) []string {
	var out []string
	for i := 0; i < len(es) && len(out) < n; i += len(es) / n {
		out = append(out, es[i].QID)
	}
	return out
}

func TestSameAsMemkgOnKGQA(t *testing.T) {
	s, m, ents := codexm(t)
	ctx := context.Background()
	questions, topics := kgqaQuestions(t)
	roots := append(spread(ents, 300), topics...)
	linked := 0
	for _, q := range questions {
		want, _ := m.Link(ctx, q)
		got, err := s.Link(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Link(%q) (-memkg +neo4j):\n%s", q, diff)
		}
		linked += len(got)
		roots = append(roots, kg.QIDs(got)...)
	}
	if linked < len(questions) {
		t.Errorf("only %d mentions in %d questions: the comparison proves little", linked, len(questions))
	}
	sort.Strings(roots)
	for _, p := range []kg.SubgraphParams{kg.DefaultSubgraphParams(), {Hops: 2, MaxNodes: 64, HubDegree: 500}} {
		want, _ := m.Subgraphs(ctx, roots, p)
		got, err := s.Subgraphs(ctx, roots, p)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Errorf("%+v: %d subgraphs from neo4j, %d from memkg", p, len(got), len(want))
		}
		for r, w := range want {
			if diff := cmp.Diff(w, got[r]); diff != "" {
				t.Errorf("%+v: subgraph of %s (-memkg +neo4j):\n%s", p, r, diff)
			}
		}
	}
}

// BenchmarkSubgraphs300: one Subgraphs call for 300 seeds (radius 1, cap 64,
// hub cap 500), and the same seeds one call each, on memkg and on Neo4j.
// p50-ms is the median latency of one call.
func BenchmarkSubgraphs300(b *testing.B) {
	s, m, ents := codexm(b)
	seeds := spread(ents, 300)
	p := kg.SubgraphParams{Hops: 1, MaxNodes: 64, HubDegree: 500}
	ctx := context.Background()
	graphs := []struct {
		name string
		g    kg.Graph
	}{{"memkg", m}, {"neo4j", s}}
	for _, g := range graphs {
		b.Run(g.name+"/batch300", func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := g.g.Subgraphs(ctx, seeds, p); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.ReportMetric(p50(lat), "p50-ms")
		})
		b.Run(g.name+"/single", func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := g.g.Subgraphs(ctx, seeds[i%len(seeds):i%len(seeds)+1], p); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.ReportMetric(p50(lat), "p50-ms")
		})
	}
}

func p50(d []time.Duration) float64 {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return float64(d[len(d)/2].Microseconds()) / 1000
}

// BenchmarkLinkKGQA links the kgqa dev questions, one call per question, on
// memkg and on Neo4j. p50-ms is the median latency of one call.
func BenchmarkLinkKGQA(b *testing.B) {
	benchQuestions(b, func(g linkingGraph, ctx context.Context, q string) error {
		_, err := g.Link(ctx, q)
		return err
	})
}

// BenchmarkLinkCandidatesKGQA lists the context linker's candidates of kgqa
// dev questions (kg.CandidateLinker) on memkg and on Neo4j.
func BenchmarkLinkCandidatesKGQA(b *testing.B) {
	benchQuestions(b, func(g linkingGraph, ctx context.Context, q string) error {
		_, _, err := g.LinkCandidates(ctx, q)
		return err
	})
}

// linkingGraph is what both backends are.
type linkingGraph interface {
	kg.Graph
	kg.CandidateLinker
}

// benchQuestions times call on each kgqa dev question in turn, on memkg and
// on Neo4j, and reports the median of one call.
func benchQuestions(b *testing.B, call func(linkingGraph, context.Context, string) error) {
	s, m, _ := codexm(b)
	questions, _ := kgqaQuestions(b)
	ctx := context.Background()
	for _, g := range []struct {
		name string
		g    linkingGraph
	}{{"memkg", m}, {"neo4j", s}} {
		b.Run(g.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if err := call(g.g, ctx, questions[i%len(questions)]); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.ReportMetric(p50(lat), "p50-ms")
		})
	}
}

// BenchmarkLinkDocuments links codexm corpus documents (158 words on
// average), as corpus loading does, on memkg and on Neo4j.
func BenchmarkLinkDocuments(b *testing.B) {
	s, m, _ := codexm(b)
	root, err := datapath.Root()
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, d := range datatest.JSONL[struct{ Title, Text string }](b, filepath.Join(root, "codexm", "corpus.jsonl"), 200) {
		texts = append(texts, d.Title+"\n"+d.Text)
	}
	ctx := context.Background()
	for _, g := range []struct {
		name string
		g    kg.Graph
	}{{"memkg", m}, {"neo4j", s}} {
		b.Run(g.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := g.g.Link(ctx, texts[i%len(texts)]); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.ReportMetric(p50(lat), "p50-ms")
		})
	}
}
