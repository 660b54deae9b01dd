package neo4jkg_test

import (
	"context"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/kgtest"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
)

// The Bolt loader keeps the kg.Sink contract; what it wrote is read back
// through the store's own graph port. Each case clears the database (the
// tests that need a data set reload it: holding).
func TestSinkConformance(t *testing.T) {
	s := open(t)
	dbMu.Lock()
	defer dbMu.Unlock()
	ctx := context.Background()
	kgtest.RunSink(t, func(t *testing.T) kgtest.SinkOutput {
		if err := s.DeleteGraph(ctx); err != nil {
			t.Fatal(err)
		}
		return kgtest.SinkOutput{
			Open: func(t *testing.T) kg.Sink {
				k, err := s.NewSink(neo4jkg.SinkOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return k
			},
			Read: func(t *testing.T, qids []string) kgtest.Written {
				ents, err := s.Entities(ctx, qids)
				if err != nil {
					t.Fatal(err)
				}
				w := kgtest.Written{Labels: map[string]string{}}
				for q, e := range ents {
					w.Labels[q] = e.Label
				}
				subs, err := s.Subgraphs(ctx, qids, kg.SubgraphParams{Hops: 1, MaxNodes: 64, HubDegree: 1000})
				if err != nil {
					t.Fatal(err)
				}
				seen := map[kg.Triple]bool{}
				for _, g := range subs {
					for _, e := range g.Edges {
						tr := kg.Triple{Head: e.From, PID: e.PID, Tail: e.To}
						if !seen[tr] && w.Labels[tr.Head] != "" && w.Labels[tr.Tail] != "" {
							seen[tr] = true
							w.Triples = append(w.Triples, tr)
						}
					}
				}
				return w
			},
		}
	})
}
