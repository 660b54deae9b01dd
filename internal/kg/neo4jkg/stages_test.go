package neo4jkg_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/kg"
)

// This file sorts after memkg_test.go, which leaves codexm loaded.

// The question-aware path's graph stages on Neo4j, on codexm and the kgqa
// dev questions: each is one statement (one round trip), behind the
// service's time limit too, and answers as memkg does.
func TestQuestionAwareStagesOneRoundTrip(t *testing.T) {
	s, m, ents := codexm(t)
	ctx := context.Background()
	timed := kg.WithTimeout(s, "neo4j", time.Minute, nil)
	questions, topics := kgqaQuestions(t)
	roots := append(spread(ents, 100), topics...)

	// count runs call and returns how many statements it sent.
	count := func(what string, call func() error) int64 {
		t.Helper()
		before := s.Statements()
		if err := call(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return s.Statements() - before
	}

	t.Run("LinkCandidates", func(t *testing.T) {
		cl := timed.(kg.CandidateLinker)
		for _, q := range questions[:40] {
			var got []kg.SpanCandidates
			n := count("LinkCandidates", func() (err error) { _, got, err = cl.LinkCandidates(ctx, q); return err })
			if n != 1 {
				t.Errorf("LinkCandidates(%q) took %d statements, want 1", q, n)
			}
			_, want, _ := m.LinkCandidates(ctx, q)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("LinkCandidates(%q) (-memkg +neo4j):\n%s", q, diff)
			}
		}
	})

	for _, p := range []kg.SubgraphParams{{Hops: 1, MaxNodes: 4000, HubDegree: 500}, {Hops: 2, MaxNodes: 4000, HubDegree: 500}} {
		var got map[string]kg.Subgraph
		n := count("Neighbourhoods", func() (err error) { got, err = kg.Neighbourhoods(ctx, timed, roots, p); return err })
		if n != 1 {
			t.Errorf("%+v: Neighbourhoods took %d statements, want 1", p, n)
		}
		want, _ := m.Neighbourhoods(ctx, roots, p)
		stars := 0
		for r, w := range want {
			if w.Nodes[0].Hub {
				stars++
			}
			if diff := cmp.Diff(w, got[r]); diff != "" {
				t.Errorf("%+v: neighbourhood of %s (-memkg +neo4j):\n%s", p, r, diff)
			}
		}
		if len(got) != len(want) || stars < 5 {
			t.Errorf("%+v: %d neighbourhoods from neo4j, %d from memkg, %d hub roots among them (want 5 or more)", p, len(got), len(want), stars)
		}
		// The same round trip with every node's degree (the channel's
		// popularity term), as memkg's Entities give them.
		var deg map[string]int
		n = count("NeighbourhoodDegrees", func() (err error) { got, deg, err = kg.NeighbourhoodsWithDegrees(ctx, timed, roots, p); return err })
		if n != 1 {
			t.Errorf("%+v: NeighbourhoodsWithDegrees took %d statements, want 1", p, n)
		}
		var qids []string
		for r, w := range want {
			if diff := cmp.Diff(w, got[r]); diff != "" {
				t.Errorf("%+v: neighbourhood of %s with degrees (-memkg +neo4j):\n%s", p, r, diff)
			}
			for _, nd := range w.Nodes {
				qids = append(qids, nd.QID)
			}
		}
		ents, _ := m.Entities(ctx, qids)
		wantDeg := make(map[string]int, len(ents))
		for q, e := range ents {
			wantDeg[q] = e.Degree
		}
		if diff := cmp.Diff(wantDeg, deg); diff != "" || len(deg) < 1000 {
			t.Errorf("%+v: %d degrees (-memkg +neo4j):\n%s", p, len(deg), diff)
		}
	}

	var sgs map[string]kg.Subgraph
	if n := count("Subgraphs", func() (err error) { sgs, err = timed.Subgraphs(ctx, roots, kg.DefaultSubgraphParams()); return err }); n != 1 {
		t.Errorf("Subgraphs took %d statements, want 1", n)
	}
	var qids []string
	for _, sg := range sgs {
		for _, nd := range sg.Nodes {
			qids = append(qids, nd.QID)
		}
	}
	if n := count("Entities", func() error { _, err := timed.Entities(ctx, qids); return err }); n != 1 {
		t.Errorf("Entities of %d QIDs took %d statements, want 1", len(qids), n)
	}
}

// BenchmarkChannelNeighbourhoods: the graph channel's neighbourhoods of
// each kgqa dev question's linked entities (radius 1, cap 4000, hub cap
// 500, as dmar walks them), in one statement (Neighbourhoods) and as the
// channel read them before: Subgraphs, then Subgraphs again for the hub
// roots' stars. hub-questions counts the questions with a hub root.
// p50-ms and p95-ms are percentiles of one question's latency (the hub
// questions are the tail); -benchtime 207x walks every question once.
func BenchmarkChannelNeighbourhoods(b *testing.B) {
	s, m, _ := codexm(b)
	questions, _ := kgqaQuestions(b)
	ctx := context.Background()
	p := kg.SubgraphParams{Hops: 1, MaxNodes: 4000, HubDegree: 500}
	var roots [][]string
	hubs := 0
	for _, q := range questions {
		ms, _ := m.Link(ctx, q)
		if len(ms) == 0 {
			continue
		}
		rs := kg.QIDs(ms)
		roots = append(roots, rs)
		ents, _ := m.Entities(ctx, rs)
		for _, e := range ents {
			if e.Degree > p.HubDegree {
				hubs++
				break
			}
		}
	}
	for _, c := range []struct {
		name string
		call func([]string) error
	}{
		{"one-statement", func(rs []string) error { _, err := s.Neighbourhoods(ctx, rs, p); return err }},
		{"two-statements", func(rs []string) error { return twoCallNeighbourhoods(ctx, s, rs, p) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if err := c.call(roots[i%len(roots)]); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.ReportMetric(p50(lat), "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms") // p50 sorted lat
			b.ReportMetric(float64(hubs), "hub-questions")
		})
	}
}

// twoCallNeighbourhoods is how the channel read its neighbourhoods before
// the one-statement port: the subgraphs, then the hub roots' one-hop
// subgraphs with no hub cap.
func twoCallNeighbourhoods(ctx context.Context, s kg.Graph, roots []string, p kg.SubgraphParams) error {
	subs, err := s.Subgraphs(ctx, roots, p)
	if err != nil {
		return err
	}
	var hubRoots []string
	for _, q := range roots {
		if sg, ok := subs[q]; ok && sg.Nodes[0].Hub {
			hubRoots = append(hubRoots, q)
		}
	}
	if len(hubRoots) == 0 {
		return nil
	}
	_, err = s.Subgraphs(ctx, hubRoots, kg.SubgraphParams{Hops: 1, MaxNodes: p.MaxNodes})
	return err
}
