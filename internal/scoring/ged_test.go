package scoring

import (
	"math"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
)

func TestGEDSimilarity(t *testing.T) {
	path := func(order ...string) kg.Subgraph {
		g := kg.Subgraph{Root: order[0]}
		for i, q := range order {
			g.Nodes = append(g.Nodes, kg.Node{QID: q})
			if i > 0 {
				g.Edges = append(g.Edges, kg.Edge{From: order[i-1], To: q, PID: "P1"})
			}
		}
		return g
	}
	abc, acb := path("A", "B", "C"), path("A", "C", "B")
	if s := GEDSimilarity(abc, abc); s != 1 {
		t.Errorf("identical graphs: %v, want 1", s)
	}
	// Same nodes, both edges differ: diff 4 of total 3+3+2+2 = 10.
	if s := GEDSimilarity(abc, acb); math.Abs(s-0.6) > 1e-12 {
		t.Errorf("A->B->C vs A->C->B: %v, want 0.6", s)
	}
	dropped := abc
	dropped.Edges = dropped.Edges[:1]
	// One edge fewer: diff 1 of total 3+3+2+1 = 9.
	if s := GEDSimilarity(abc, dropped); math.Abs(s-8.0/9) > 1e-12 {
		t.Errorf("one edge dropped: %v, want 8/9", s)
	}
	if s := GEDSimilarity(abc, path("X", "Y")); s != 0 {
		t.Errorf("disjoint graphs: %v, want 0", s)
	}
}
