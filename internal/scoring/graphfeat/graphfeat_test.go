package graphfeat

import (
	"fmt"
	"math"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
)

func path(order ...string) kg.Subgraph {
	g := kg.Subgraph{Root: order[0]}
	pids := []string{"P57", "P161"}
	for i, q := range order {
		g.Nodes = append(g.Nodes, kg.Node{QID: q, Hop: i})
		if i > 0 {
			g.Edges = append(g.Edges, kg.Edge{From: order[i-1], To: q, PID: pids[i-1]})
		}
	}
	return g
}

// The sketches are part of the model's input: they must never change, on any
// machine. These bit patterns were computed once and pinned.
func TestSketchesPinned(t *testing.T) {
	bits := func(v []float32) string {
		s := ""
		for _, x := range v {
			if x > 0 {
				s += "1"
			} else {
				s += "0"
			}
		}
		return s
	}
	e := EntitySketch("Q42")
	r := RelSketch("P31")
	got := bits(e[:]) + "/" + bits(r[:])
	const want = "11011111100101100100011010000101/000000100001" // also computed by an independent Python FNV-1a + splitmix64
	if got != want {
		t.Fatalf("sketch bits changed:\n got %s\nwant %s", got, want)
	}
	if e[0] != EntityScale && e[0] != -EntityScale {
		t.Fatalf("entity sketch magnitude %v, want %v", e[0], EntityScale)
	}
}

func TestFeaturizeShapeAndPadding(t *testing.T) {
	gs := []kg.Subgraph{path("Q1", "Q2", "Q3"), {}}
	b, err := Featurize(gs, 8)
	if err != nil {
		t.Fatal(err)
	}
	if b.B != 2 || b.N != 8 || len(b.X) != 2*8*F || len(b.AdjOut) != 2*64 || len(b.Mask) != 16 {
		t.Fatalf("shapes: B=%d N=%d X=%d Adj=%d Mask=%d", b.B, b.N, len(b.X), len(b.AdjOut), len(b.Mask))
	}
	wantMask := []float32{1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	for i, m := range wantMask {
		if b.Mask[i] != m {
			t.Fatalf("mask[%d] = %v, want %v", i, b.Mask[i], m)
		}
	}
	for i := 3 * F; i < len(b.X); i++ {
		if b.X[i] != 0 {
			t.Fatalf("padding feature %d = %v, want 0", i, b.X[i])
		}
	}
	// Edge Q1->Q2: out row of Q1, in row of Q2.
	if b.AdjOut[0*8+1] != 1 || b.AdjIn[1*8+0] != 1 || b.AdjOut[1*8+0] != 0 {
		t.Fatalf("adjacency of Q1->Q2 wrong: out[0][1]=%v in[1][0]=%v out[1][0]=%v", b.AdjOut[1], b.AdjIn[8], b.AdjOut[8])
	}
	if _, err := Featurize(gs, 0); err == nil {
		t.Fatal("Featurize with n=0: want an error")
	}
}

func TestAdjacencyRowsAreMeans(t *testing.T) {
	g := kg.Subgraph{Root: "Q1", Nodes: []kg.Node{{QID: "Q1"}, {QID: "Q2", Hop: 1}, {QID: "Q3", Hop: 1}, {QID: "Q4", Hop: 1}},
		Edges: []kg.Edge{
			{From: "Q1", To: "Q2", PID: "P1"}, {From: "Q1", To: "Q2", PID: "P2"}, // two relations, one neighbour
			{From: "Q1", To: "Q3", PID: "P1"}, {From: "Q4", To: "Q1", PID: "P3"},
			{From: "Q1", To: "Q9", PID: "P1"}, // Q9 is not a node: ignored
		}}
	b, _ := Featurize([]kg.Subgraph{g}, 4)
	for i := 0; i < 4; i++ {
		var so, si float32
		for j := 0; j < 4; j++ {
			so += b.AdjOut[i*4+j]
			si += b.AdjIn[i*4+j]
		}
		if (so != 0 && math.Abs(float64(so-1)) > 1e-6) || (si != 0 && math.Abs(float64(si-1)) > 1e-6) {
			t.Fatalf("row %d sums out=%v in=%v, want 0 or 1", i, so, si)
		}
	}
	if b.AdjOut[0*4+1] != 0.5 || b.AdjOut[0*4+2] != 0.5 || b.AdjIn[0*4+3] != 1 {
		t.Fatalf("Q1 rows: out %v in %v", b.AdjOut[:4], b.AdjIn[:4])
	}
	// Q1's out-relation sketch is the mean over its 3 out statements (P1, P2, P1).
	p1, p2 := RelSketch("P1"), RelSketch("P2")
	for k := 0; k < RelDims; k++ {
		want := (2*p1[k] + p2[k]) / 3
		if got := b.X[offOutRel+k]; math.Abs(float64(got-want)) > 1e-6 {
			t.Fatalf("out-relation sketch[%d] = %v, want %v", k, got, want)
		}
	}
}

func TestTruncatesToN(t *testing.T) {
	g := kg.Subgraph{Root: "Q1", Nodes: []kg.Node{{QID: "Q1"}}}
	for i := 2; i <= 10; i++ {
		g.Nodes = append(g.Nodes, kg.Node{QID: fmt.Sprintf("Q%d", i), Hop: 1})
		g.Edges = append(g.Edges, kg.Edge{From: "Q1", To: fmt.Sprintf("Q%d", i), PID: "P1"})
	}
	b, _ := Featurize([]kg.Subgraph{g}, 4)
	var n float32
	for _, m := range b.Mask {
		n += m
	}
	if n != 4 {
		t.Fatalf("mask counts %v nodes, want 4", n)
	}
	// Q1 keeps only its out-edges to the 3 kept nodes.
	if b.AdjOut[1] != float32(1)/3 {
		t.Fatalf("AdjOut[0][1] = %v, want 1/3", b.AdjOut[1])
	}
}

func TestOrderChangesInput(t *testing.T) {
	b, _ := Featurize([]kg.Subgraph{path("Q1", "Q2", "Q3"), path("Q1", "Q3", "Q2")}, 4)
	same := true
	for i := 0; i < 4*F; i++ {
		if b.X[i] != b.X[4*F+i] {
			same = false
		}
	}
	if same {
		t.Fatal("A->B->C and A->C->B featurise identically")
	}
}
