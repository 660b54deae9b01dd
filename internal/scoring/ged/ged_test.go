package ged

import (
	"context"
	"math"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
)

func g(nodes []string, edges ...kg.Edge) kg.Subgraph {
	s := kg.Subgraph{}
	for i, n := range nodes {
		if i == 0 {
			s.Root = n
		}
		s.Nodes = append(s.Nodes, kg.Node{QID: n})
	}
	s.Edges = edges
	return s
}

func e(f, p, t string) kg.Edge { return kg.Edge{From: f, PID: p, To: t} }

func TestSimilarity(t *testing.T) {
	abc := g([]string{"A", "B", "C"}, e("A", "P1", "B"), e("B", "P2", "C"))
	tests := []struct {
		name string
		a, b kg.Subgraph
		want float64
	}{
		{"identical", abc, abc, 1},
		{"both empty", kg.Subgraph{}, kg.Subgraph{}, 1},
		{"one empty", abc, kg.Subgraph{}, 0},
		{"disjoint", abc, g([]string{"X", "Y"}, e("X", "P1", "Y")), 0},
		// Same nodes, no common edge: 2*3 / (3+3+2+2).
		{"reordered path A->C->B", abc, g([]string{"A", "C", "B"}, e("A", "P1", "C"), e("C", "P2", "B")), 0.6},
		// One edge dropped: 2*(3+1) / (3+3+2+1).
		{"one edge dropped", abc, g([]string{"A", "B", "C"}, e("A", "P1", "B")), 8.0 / 9},
		// Reversed direction is another edge: 2*(3+1) / 10.
		{"reversed edge", abc, g([]string{"A", "B", "C"}, e("A", "P1", "B"), e("C", "P2", "B")), 0.8},
		// Other relation on the same pair: 2*(3+1) / 10.
		{"other relation", abc, g([]string{"A", "B", "C"}, e("A", "P1", "B"), e("B", "P3", "C")), 0.8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Similarity(tc.a, tc.b)
			if math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("Similarity = %v, want %v", got, tc.want)
			}
			if back := Similarity(tc.b, tc.a); math.Abs(back-got) > 1e-12 {
				t.Fatalf("not symmetric: %v vs %v", got, back)
			}
		})
	}
}

func TestMatrix(t *testing.T) {
	a := g([]string{"A", "B"}, e("A", "P1", "B"))
	b := g([]string{"B", "C"}, e("B", "P1", "C"))
	m, err := Matrix(context.Background(), []kg.Subgraph{a, b}, []kg.Subgraph{b, a, {}})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{2.0 / 6, 1, 0}, {1, 2.0 / 6, 0}}
	for i := range want {
		for j := range want[i] {
			if math.Abs(m[i][j]-want[i][j]) > 1e-12 {
				t.Fatalf("m[%d][%d] = %v, want %v", i, j, m[i][j], want[i][j])
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Matrix(ctx, []kg.Subgraph{a}, []kg.Subgraph{b}); err == nil {
		t.Fatal("cancelled context: want an error")
	}
}
