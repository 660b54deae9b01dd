// Package kgtest is the conformance suite of the kg.Graph port. Every backend
// runs it over a real KG bundle it has loaded; the suite computes what the
// answers must be from the bundle itself, with a deliberately plain reference
// implementation of the rules documented on kg.SubgraphParams.
package kgtest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
)

// Datasets runs test as a subtest on each shared data set the suite is run
// over: codexm-film, then codexm (skipped in -short mode).
func Datasets(t *testing.T, test func(t *testing.T, name string)) {
	for _, name := range []string{"codexm-film", "codexm"} {
		t.Run(name, func(t *testing.T) {
			if name == "codexm" && testing.Short() {
				t.Skip("full codexm in -short mode")
			}
			test(t, name)
		})
	}
}

// Run checks g, which must hold exactly the bundle in dir: Entities, Link,
// Subgraphs and the graph channel's neighbourhoods (kg.Neighbourhoods, the
// backend's kg.NeighbourhoodReader when it has one).
func Run(t *testing.T, dir string, g kg.Graph) {
	t.Helper()
	b, err := bundle.Read(context.Background(), dir)
	if err != nil {
		t.Fatalf("read bundle: %v", err)
	}
	ref := newReference(b)
	ctx := context.Background()

	runLinking(t, b, ref, g)
	roots := ref.sampleRoots(60)
	runSubgraphs(t, ref, g, roots)
	runNeighbourhoods(t, ref, g, roots)
	runEntities(t, b, ref, g, roots)

	t.Run("SubgraphsNoRoots", func(t *testing.T) {
		for _, roots := range [][]string{nil, {}, {"Q999999999999"}} {
			got, err := g.Subgraphs(ctx, roots, kg.DefaultSubgraphParams())
			if err != nil {
				t.Fatalf("Subgraphs(%q): %v", roots, err)
			}
			if len(got) != 0 {
				t.Errorf("Subgraphs(%q) = %d subgraphs, want none", roots, len(got))
			}
		}
	})

	t.Run("CancelledContext", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := g.Subgraphs(c, roots, kg.DefaultSubgraphParams()); err == nil {
			t.Error("Subgraphs with a cancelled context returned no error")
		}
	})
}

// runLinking checks Entities and Link against the bundle and the
// dictionary linker.
func runLinking(t *testing.T, b *bundle.KG, ref *reference, g kg.Graph) {
	ctx := context.Background()
	t.Run("Entities", func(t *testing.T) {
		want := b.Entities[len(b.Entities)/2]
		got, err := g.Entities(ctx, []string{want.QID, "Q999999999999"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("got %d entities, want 1 (unknown QIDs are absent)", len(got))
		}
		e := got[want.QID]
		if e.Label != want.Label || e.Degree != ref.degree[want.QID] {
			t.Errorf("entity %s = {%q, degree %d}, want {%q, degree %d}", want.QID, e.Label, e.Degree, want.Label, ref.degree[want.QID])
		}
		if diff := cmp.Diff(want.Aliases, e.Aliases); diff != "" {
			t.Errorf("aliases of %s (-want +got):\n%s", want.QID, diff)
		}
	})

	t.Run("LinkMatchesDictionary", func(t *testing.T) {
		dict := kg.NewDictionary(withDegrees(b.Entities, ref.degree))
		texts := []string{}
		for i := 0; i < len(b.Entities) && len(texts) < 40; i += len(b.Entities)/40 + 1 {
			e := b.Entities[i]
			texts = append(texts, "What is known about "+strings.ToUpper(e.Label)+" and its history?")
		}
		texts = append(texts, "which films did christopher nolan direct", "Who can say if it is us?", "")
		for _, text := range texts {
			got, err := g.Link(ctx, text)
			if err != nil {
				t.Fatalf("Link(%q): %v", text, err)
			}
			if diff := cmp.Diff(dict.Link(text), got); diff != "" {
				t.Errorf("Link(%q) (-want +got):\n%s", text, diff)
			}
		}
	})

	t.Run("LinkIsDeterministic", func(t *testing.T) {
		text := "Christopher Nolan directed Inception with Leonardo DiCaprio in the United States"
		first, err := g.Link(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			again, err := g.Link(ctx, text)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(first, again); diff != "" {
				t.Fatalf("Link not deterministic (-first +again):\n%s", diff)
			}
		}
	})
}

// runSubgraphs checks Subgraphs of roots against the reference for each
// parameter shape, and that the sample exercises every rule.
func runSubgraphs(t *testing.T, ref *reference, g kg.Graph, roots []string) {
	ctx := context.Background()
	params := []kg.SubgraphParams{
		kg.DefaultSubgraphParams(),
		{Hops: 1, MaxNodes: 8, HubDegree: 500},
		{Hops: 2, MaxNodes: 64, HubDegree: 40},
		{Hops: 2, MaxNodes: 200, HubDegree: 10},
		{Hops: 0, MaxNodes: 64, HubDegree: 500},   // the root alone
		{Hops: 1, MaxNodes: 1, HubDegree: 500},    // cut before the first level
		{Hops: 3, MaxNodes: 300, HubDegree: 30},   // the deepest unrolled level
		{Hops: 2, MaxNodes: 4000, HubDegree: 500}, // the graph-recall channel's shape
		{Hops: 1, MaxNodes: 0, HubDegree: 0},      // zero caps cap nothing
	}
	for _, p := range params {
		p := p
		t.Run(fmt.Sprintf("Subgraphs/h%d-n%d-hub%d", p.Hops, p.MaxNodes, p.HubDegree), func(t *testing.T) {
			// Unknown roots and repeats are in the query too.
			query := append([]string{"Q999999999999"}, roots...)
			query = append(query, roots[0], "Q999999999998")
			got, err := g.Subgraphs(ctx, query, p)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := got["Q999999999999"]; ok {
				t.Error("unknown root must be absent")
			}
			if len(got) != len(roots) {
				t.Fatalf("got %d subgraphs for %d known roots", len(got), len(roots))
			}
			for _, r := range roots {
				want := ref.subgraph(r, p)
				if diff := cmp.Diff(want, got[r]); diff != "" {
					t.Errorf("subgraph of %s (-want +got):\n%s", r, diff)
				}
				checkInvariants(t, got[r], p)
			}
		})
	}

	// The cases above must exercise what they claim: hub roots and hub
	// neighbours, cuts, and a level 2.
	t.Run("SubgraphCasesCoverTheRules", func(t *testing.T) {
		hubRoot, hubKept, cut, level2 := false, false, false, false
		for _, r := range roots {
			sg := ref.subgraph(r, kg.SubgraphParams{Hops: 2, MaxNodes: 64, HubDegree: 40})
			hubRoot = hubRoot || sg.Nodes[0].Hub
			cut = cut || sg.Truncated
			for _, n := range sg.Nodes[1:] {
				hubKept = hubKept || n.Hub
				level2 = level2 || n.Hop == 2
			}
		}
		if !hubRoot || !hubKept || !cut || !level2 {
			t.Errorf("sample lacks a case: hub root %v, hub neighbour %v, cut %v, level 2 %v", hubRoot, hubKept, cut, level2)
		}
	})
}

func withDegrees(es []kg.Entity, deg map[string]int) []kg.Entity {
	out := make([]kg.Entity, len(es))
	for i, e := range es {
		e.Degree = deg[e.QID]
		out[i] = e
	}
	return out
}

// checkInvariants asserts the documented shape independently of the reference.
func checkInvariants(t *testing.T, sg kg.Subgraph, p kg.SubgraphParams) {
	t.Helper()
	if len(sg.Nodes) == 0 || sg.Nodes[0].QID != sg.Root || sg.Nodes[0].Hop != 0 {
		t.Errorf("%s: root must come first at hop 0", sg.Root)
	}
	if p.MaxNodes > 0 && len(sg.Nodes) > p.MaxNodes {
		t.Errorf("%s: %d nodes over the cap %d", sg.Root, len(sg.Nodes), p.MaxNodes)
	}
	in := sg.NodeSet()
	hub := map[string]bool{}
	for i, n := range sg.Nodes {
		hub[n.QID] = n.Hub
		if n.Hop > p.Hops {
			t.Errorf("%s: node %s at hop %d beyond %d", sg.Root, n.QID, n.Hop, p.Hops)
		}
		if i > 0 {
			prev := sg.Nodes[i-1]
			if prev.Hop > n.Hop || (prev.Hop == n.Hop && prev.QID >= n.QID) {
				t.Errorf("%s: nodes not in (hop, QID) order at %d", sg.Root, i)
			}
		}
	}
	for _, e := range sg.Edges {
		if _, ok := in[e.From]; !ok {
			t.Errorf("%s: edge from %s outside the subgraph", sg.Root, e.From)
		}
		if _, ok := in[e.To]; !ok {
			t.Errorf("%s: edge to %s outside the subgraph", sg.Root, e.To)
		}
		if hub[e.From] && hub[e.To] {
			t.Errorf("%s: edge between two hubs %s-%s", sg.Root, e.From, e.To)
		}
	}
}

// reference answers from the bundle with plain maps and loops.
type reference struct {
	degree map[string]int
	nbrs   map[string]map[string]bool
	edges  map[string][]kg.Edge // every edge touching a node
	label  map[string]string
	rel    map[string]string
	qids   []string
}

func newReference(b *bundle.KG) *reference {
	r := &reference{degree: map[string]int{}, nbrs: map[string]map[string]bool{}, edges: map[string][]kg.Edge{}, label: map[string]string{}, rel: map[string]string{}}
	for _, e := range b.Entities {
		r.label[e.QID] = e.Label
		r.qids = append(r.qids, e.QID)
	}
	for pid, rel := range b.Relations {
		r.rel[pid] = rel.Label
	}
	for _, t := range b.Triples {
		r.degree[t.Head]++
		r.degree[t.Tail]++
		for _, pair := range [][2]string{{t.Head, t.Tail}, {t.Tail, t.Head}} {
			if r.nbrs[pair[0]] == nil {
				r.nbrs[pair[0]] = map[string]bool{}
			}
			r.nbrs[pair[0]][pair[1]] = true
		}
		e := kg.Edge{From: t.Head, To: t.Tail, PID: t.PID, Label: r.rel[t.PID]}
		r.edges[t.Head] = append(r.edges[t.Head], e)
		if t.Tail != t.Head {
			r.edges[t.Tail] = append(r.edges[t.Tail], e)
		}
	}
	sort.Strings(r.qids)
	return r
}

// sampleRoots picks roots across the degree range: the highest-degree ones,
// and an even spread of the rest.
func (r *reference) sampleRoots(n int) []string {
	byDeg := append([]string(nil), r.qids...)
	sort.SliceStable(byDeg, func(i, j int) bool { return r.degree[byDeg[i]] > r.degree[byDeg[j]] })
	out := append([]string(nil), byDeg[:min(5, len(byDeg))]...)
	for i := 5; i < len(byDeg) && len(out) < n; i += len(byDeg)/n + 1 {
		out = append(out, byDeg[i])
	}
	return out
}

func (r *reference) subgraph(root string, p kg.SubgraphParams) kg.Subgraph {
	isHub := func(q string) bool { return p.HubDegree > 0 && r.degree[q] > p.HubDegree }
	if p.MaxNodes <= 0 {
		p.MaxNodes = len(r.qids) + 1
	}
	hop := map[string]int{root: 0}
	nodes := []string{root}
	frontier := []string{root}
	truncated := false
	for h := 1; h <= p.Hops; h++ {
		set := map[string]bool{}
		for _, u := range frontier {
			if isHub(u) {
				continue
			}
			for v := range r.nbrs[u] {
				if _, seen := hop[v]; !seen {
					set[v] = true
				}
			}
		}
		cands := make([]string, 0, len(set))
		for v := range set {
			cands = append(cands, v)
		}
		sort.Strings(cands)
		frontier = nil
		for _, v := range cands {
			if len(nodes) >= p.MaxNodes {
				truncated = true
				break
			}
			hop[v] = h
			nodes = append(nodes, v)
			frontier = append(frontier, v)
		}
	}
	sg := kg.Subgraph{Root: root, Truncated: truncated}
	for _, q := range nodes {
		sg.Nodes = append(sg.Nodes, kg.Node{QID: q, Label: r.label[q], Hop: hop[q], Hub: isHub(q)})
	}
	seen := map[kg.Edge]bool{}
	for _, q := range nodes {
		for _, e := range r.edges[q] {
			_, a := hop[e.From]
			_, b := hop[e.To]
			if a && b && !(isHub(e.From) && isHub(e.To)) && !seen[e] {
				seen[e] = true
				sg.Edges = append(sg.Edges, e)
			}
		}
	}
	kg.SortEdges(sg.Edges)
	return sg
}
