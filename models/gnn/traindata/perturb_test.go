package main

import (
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
)

func pathABC() kg.Subgraph {
	return kg.Subgraph{Root: "QA",
		Nodes: []kg.Node{{QID: "QA"}, {QID: "QB", Hop: 1}, {QID: "QC", Hop: 2}},
		Edges: []kg.Edge{{From: "QA", To: "QB", PID: "P1"}, {From: "QB", To: "QC", PID: "P2"}}}
}

func edgeSet(g kg.Subgraph) []kg.Edge {
	out := append([]kg.Edge(nil), g.Edges...)
	sort.Slice(out, func(i, j int) bool { return out[i].From+out[i].PID+out[i].To < out[j].From+out[j].PID+out[j].To })
	return out
}

func TestPermuteOfAPathIsTheReorderedPath(t *testing.T) {
	got := permute(pathABC(), 0.5, rand.New(rand.NewPCG(1, 2)))
	want := kg.Subgraph{Root: "QA",
		Nodes: []kg.Node{{QID: "QA"}, {QID: "QC", Hop: 1}, {QID: "QB", Hop: 2}},
		Edges: []kg.Edge{{From: "QA", To: "QC", PID: "P1"}, {From: "QC", To: "QB", PID: "P2"}}}
	if !reflect.DeepEqual(got.Nodes, want.Nodes) || !reflect.DeepEqual(edgeSet(got), edgeSet(want)) {
		t.Fatalf("permute(A->B->C) = %+v, want A->C->B %+v", got, want)
	}
}

func TestPerturbationsKeepTheRootAndTheInput(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pl := &pool{ents: []kg.Entity{{QID: "QX", Label: "x"}, {QID: "QY", Label: "y", Degree: 900}}, pids: []string{"P9"}, hub: 500}
	in := pathABC()
	orig := pathABC()
	for i := 0; i < 50; i++ {
		for name, g := range map[string]kg.Subgraph{
			"positive": positive(in, 0.1, r), "hard": perturbHard(in, 0.5, r, pl),
			"rewire": rewire(in, 0.5, r), "permute": permute(in, 0.5, r),
		} {
			if len(g.Nodes) == 0 || g.Nodes[0].QID != "QA" || g.Root != "QA" {
				t.Fatalf("%s lost the root: %+v", name, g)
			}
			nodes := g.NodeSet()
			for _, e := range g.Edges {
				if _, ok := nodes[e.From]; !ok {
					t.Fatalf("%s: edge %v leaves the node set", name, e)
				}
				if _, ok := nodes[e.To]; !ok {
					t.Fatalf("%s: edge %v leaves the node set", name, e)
				}
			}
		}
	}
	if !reflect.DeepEqual(in, orig) {
		t.Fatal("a perturbation modified its input")
	}
}

func TestWalk(t *testing.T) {
	// A star with a tail: QA-QB, QA-QC, QC-QD.
	g := kg.Subgraph{Root: "QA",
		Nodes: []kg.Node{{QID: "QA"}, {QID: "QB", Hop: 1}, {QID: "QC", Hop: 1}, {QID: "QD", Hop: 2}},
		Edges: []kg.Edge{{From: "QA", To: "QB", PID: "P1"}, {From: "QA", To: "QC", PID: "P1"}, {From: "QD", To: "QC", PID: "P2"}}}
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20; i++ {
		w := walk(g, 3, r)
		if w.Nodes[0].QID != "QA" || w.Nodes[0].Hop != 0 {
			t.Fatalf("walk does not start at the root: %+v", w.Nodes)
		}
		for _, n := range w.Nodes {
			want := map[string]int{"QA": 0, "QB": 1, "QC": 1, "QD": 2}[n.QID]
			if n.Hop != want {
				t.Fatalf("walk: %s at hop %d, want %d", n.QID, n.Hop, want)
			}
		}
		if len(w.Edges) != len(w.Nodes)-1 { // a tree stays a tree
			t.Fatalf("walk kept %d edges for %d nodes", len(w.Edges), len(w.Nodes))
		}
	}
}

func TestPositiveChangedNeverReturnsTheAnchor(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	in := pathABC()
	for i := 0; i < 200; i++ {
		p := positiveChanged(in, 0.1, r)
		if len(p.Nodes) == len(in.Nodes) && len(p.Edges) == len(in.Edges) {
			t.Fatalf("positive %d is the anchor: %+v", i, p)
		}
		if p.Nodes[0].QID != "QA" {
			t.Fatalf("positive %d lost the root: %+v", i, p)
		}
		if len(p.Nodes) == len(in.Nodes) {
			// Only an edge went: the nodes keep their hops, as in the
			// ordering test's dropped copy.
			if !reflect.DeepEqual(p.Nodes, in.Nodes) {
				t.Fatalf("positive %d changed nodes: %+v", i, p.Nodes)
			}
		}
	}
	if !reflect.DeepEqual(in, pathABC()) {
		t.Fatal("positiveChanged modified its input")
	}
	// A graph without edges has nothing to drop but nodes; it may stay as is.
	lone := kg.Subgraph{Root: "QA", Nodes: []kg.Node{{QID: "QA"}}}
	if p := positiveChanged(lone, 0.1, r); len(p.Nodes) != 1 {
		t.Fatalf("positiveChanged(lone root) = %+v", p)
	}
}

// The ordering test's entities are never training anchors.
func TestProbeRootsAreHeldOut(t *testing.T) {
	for q := range probeRoots {
		if !heldOut(q) {
			t.Errorf("%s is a training root", q)
		}
	}
	if heldOut("Q1") { // FNV-1a("Q1") mod 10 = 3
		t.Error("Q1 held out: the FNV-1a split is broken")
	}
}
