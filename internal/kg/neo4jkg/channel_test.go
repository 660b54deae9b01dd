package neo4jkg_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/kg"
)

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
