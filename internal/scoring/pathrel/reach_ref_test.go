package pathrel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/vec"
)

// The walk (which builds edge lists for the root's neighbours only and a
// path only for each entity's winner) returns what the plain walk below (the
// implementation before it) returns, ties included, on random subgraphs
// with few relations, where equal relevances are common. The calls follow
// one another, so each after the first walks with the pooled walker of the
// one before: nothing it held may leak into the next.
func TestReachMatchesPlainWalk(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		starts, subs := randomWalkGraph(seed)
		for _, directed := range []bool{false, true} {
			for hops := 1; hops <= 2; hops++ {
				var prior map[StepKey]float64
				if seed%3 == 0 {
					prior = map[StepKey]float64{{PID: "P1", Backward: true}: 0.2, {PID: "P3"}: 0.1}
				}
				q := textVec("place of birth country")
				ea, eb := &bagEncoder{vocab: vocab}, &bagEncoder{vocab: vocab}
				got, err := NewRelations(ea, directed).Reach(context.Background(), q, starts, subs, hops, prior)
				if err != nil {
					t.Fatal(err)
				}
				want, err := NewRelations(eb, directed).refReach(context.Background(), q, starts, subs, hops, prior)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d directed %v hops %d: %d paths, want %d; first difference at %d", seed, directed, hops, len(got), len(want), firstDiff(got, want))
				}
				if ea.calls != eb.calls || ea.texts != eb.texts {
					t.Fatalf("seed %d: encoder calls %d (%d texts), want %d (%d)", seed, ea.calls, ea.texts, eb.calls, eb.texts)
				}
			}
		}
	}
}

// randomWalkGraph is 1-3 roots' subgraphs over 40 entities with few
// relations, where equal relevances are common, seeded.
func randomWalkGraph(seed uint64) ([]Root, map[string]kg.Subgraph) {
	labels := []string{"place birth", "country", "spouse", "citizenship", "place", "birth of"}
	rng := rand.New(rand.NewPCG(seed, 11))
	subs := map[string]kg.Subgraph{}
	var starts []Root
	for r := 0; r < 1+rng.IntN(3); r++ {
		root := fmt.Sprintf("Q%d", 1+rng.IntN(40))
		starts = append(starts, Root{QID: root, Mentioned: rng.IntN(2) == 0})
		sg := kg.Subgraph{Root: root, Nodes: []kg.Node{{QID: root}}}
		for n := 1; n <= 40; n++ {
			q := fmt.Sprintf("Q%d", n)
			if q != root {
				sg.Nodes = append(sg.Nodes, kg.Node{QID: q, Hop: 1 + rng.IntN(2), Hub: rng.IntN(10) == 0})
			}
		}
		for m := 0; m < 150; m++ {
			a, b := sg.Nodes[rng.IntN(len(sg.Nodes))].QID, sg.Nodes[rng.IntN(len(sg.Nodes))].QID
			if rng.IntN(3) == 0 {
				a = root
			}
			if rng.IntN(2) == 0 {
				a, b = b, a
			}
			l := rng.IntN(len(labels))
			sg.Edges = append(sg.Edges, kg.Edge{From: a, To: b, PID: fmt.Sprintf("P%d", l), Label: labels[l]})
		}
		sort.Slice(sg.Edges, func(i, j int) bool { return kg.CompareEdges(sg.Edges[i], sg.Edges[j]) < 0 })
		subs[root] = sg
	}
	return starts, subs
}

// A walk started with the first roots and extended with the others returns
// what one Reach over all of them returns, or declines the extension, and
// only where an earlier walk went through a later root or reached a later
// mentioned one. Both happen over the seeds.
func TestWalkExtendMatchesReach(t *testing.T) {
	ctx := context.Background()
	took, declined := 0, 0
	for seed := uint64(1); seed <= 60; seed++ {
		starts, subs := randomWalkGraph(seed)
		if len(starts) < 2 {
			continue
		}
		for _, directed := range []bool{false, true} {
			rel := NewRelations(&bagEncoder{vocab: vocab}, directed)
			q := textVec("place of birth country")
			want, err := rel.Reach(ctx, q, starts, subs, 2, nil)
			if err != nil {
				t.Fatal(err)
			}
			first, _ := rel.Reach(ctx, q, starts[:1], subs, 2, nil)
			wk, err := rel.Start(ctx, q, starts[:1], subs, 2, nil)
			if err != nil {
				t.Fatal(err)
			}
			ok, err := wk.Extend(ctx, starts[1:], subs)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				wk.Release()
				if !walkedThrough(first, subs[starts[0].QID], starts[1:]) {
					t.Fatalf("seed %d: the extension was declined, but no earlier path goes through or reaches a later root", seed)
				}
				declined++
				continue
			}
			got := wk.Paths()
			wk.Release()
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d directed %v: %d paths, want %d; first difference at %d", seed, directed, len(got), len(want), firstDiff(got, want))
			}
			took++
		}
	}
	t.Logf("extensions taken %d, declined %d", took, declined)
	if took == 0 || declined == 0 {
		t.Fatalf("extensions taken %d, declined %d: both should happen", took, declined)
	}
}

// walkedThrough reports whether a two-hop walk of sg goes through one of
// roots (a neighbour of sg's root, not a hub), or whether paths reach a
// mentioned one.
func walkedThrough(paths []Path, sg kg.Subgraph, roots []Root) bool {
	hub := map[string]bool{}
	for _, n := range sg.Nodes {
		hub[n.QID] = n.Hub
	}
	for _, r := range roots {
		for _, e := range sg.Edges {
			if e.From != e.To && (e.From == sg.Root && e.To == r.QID || e.To == sg.Root && e.From == r.QID) && !hub[r.QID] && r.QID != sg.Root {
				return true
			}
		}
		for _, p := range paths {
			if r.Mentioned && p.Entity == r.QID {
				return true
			}
		}
	}
	return false
}

func firstDiff(a, b []Path) int {
	for i := range a {
		if i >= len(b) || !reflect.DeepEqual(a[i], b[i]) {
			return i
		}
	}
	return len(a)
}

// refReach is Reach as it was before the neighbour-only edge lists.
func (r *Relations) refReach(ctx context.Context, qvec []float32, starts []Root, subs map[string]kg.Subgraph, hops int, prior map[StepKey]float64) ([]Path, error) {
	if hops < 1 {
		return nil, nil
	}
	isRoot, mentioned := map[string]bool{}, map[string]bool{}
	roots := make([]string, len(starts))
	for i, q := range starts {
		roots[i] = q.QID
		isRoot[q.QID] = true
		mentioned[q.QID] = mentioned[q.QID] || q.Mentioned
	}
	// Collect the relation texts of every edge first: one encoder call.
	var keys []relKey
	seenKey := map[relKey]bool{}
	for _, q := range roots {
		for _, e := range subs[q].Edges {
			for _, b := range []bool{false, true} {
				k := relKey{pid: e.PID, label: e.Label, backward: b && r.Directed}
				if !seenKey[k] {
					seenKey[k] = true
					keys = append(keys, k)
				}
			}
		}
	}
	vecs, err := r.vectors(ctx, keys)
	if err != nil {
		return nil, err
	}
	rel := map[relKey]float64{}
	for k, v := range vecs {
		rel[k] = vec.Cosine64(qvec, v)
	}
	step := func(e kg.Edge, from string) Step {
		back := e.To == from && e.From != from
		to := e.To
		if back {
			to = e.From
		}
		rv := rel[relKey{pid: e.PID, label: e.Label, backward: back && r.Directed}] + prior[StepKey{PID: e.PID, Backward: back}]
		return Step{From: from, PID: e.PID, Label: e.Label, To: to, Backward: back, Relevance: rv}
	}
	best := map[string]Path{}
	offer := func(p Path) {
		if mentioned[p.Entity] || p.Entity == p.Root() {
			return
		}
		if b, ok := best[p.Entity]; !ok || p.Relevance > b.Relevance || (p.Relevance == b.Relevance && p.String() < b.String()) {
			best[p.Entity] = p
		}
	}
	// vias counts the distinct intermediates of each two-hop entity.
	type via struct{ entity, through string }
	seenVia := map[via]bool{}
	vias := map[string]int{}
	for _, q := range roots {
		sg, ok := subs[q]
		if !ok {
			continue
		}
		hub := make(map[string]bool, len(sg.Nodes))
		for _, n := range sg.Nodes {
			hub[n.QID] = n.Hub
		}
		adj := refAdjacency(sg.Edges)
		for _, e1 := range adj[q] {
			s1 := step(e1, q)
			offer(Path{Entity: s1.To, Steps: []Step{s1}, Relevance: s1.Relevance})
			if hops < 2 || hub[s1.To] || isRoot[s1.To] {
				continue
			}
			for _, e2 := range adj[s1.To] {
				s2 := step(e2, s1.To)
				if s2.To == q {
					continue
				}
				if v := (via{s2.To, s1.To}); !seenVia[v] {
					seenVia[v] = true
					vias[s2.To]++
				}
				offer(Path{Entity: s2.To, Steps: []Step{s1, s2}, Relevance: (s1.Relevance+s2.Relevance)/2 - TwoHopPenalty})
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	out := make([]Path, 0, len(best))
	for _, p := range best {
		if n := vias[p.Entity]; len(p.Steps) == 2 && n > 1 {
			p.Relevance += ViaBonus * math.Log(float64(n))
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Relevance != out[j].Relevance {
			return out[i].Relevance > out[j].Relevance
		}
		return out[i].Entity < out[j].Entity
	})
	return out, nil
}
func refAdjacency(edges []kg.Edge) map[string][]kg.Edge {
	deg := make(map[string]int, len(edges))
	for _, e := range edges {
		if e.From != e.To {
			deg[e.From]++
			deg[e.To]++
		}
	}
	all := make([]kg.Edge, 0, 2*len(edges))
	adj := make(map[string][]kg.Edge, len(deg))
	for n, d := range deg {
		adj[n], all = all[len(all):len(all):len(all)+d], all[:len(all)+d]
	}
	for _, e := range edges {
		if e.From != e.To {
			adj[e.From] = append(adj[e.From], e)
			adj[e.To] = append(adj[e.To], e)
		}
	}
	return adj
}

func TestComparePiecesIsStringOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	alphabet := []string{"", "a", "b", "ab", " -[", "]-> ", "Q1", "Q12", " of"}
	pieces := func() []string {
		out := make([]string, rng.IntN(6))
		for i := range out {
			out[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return out
	}
	for n := 0; n < 20000; n++ {
		a, b := pieces(), pieces()
		if got, want := comparePieces(a, b), strings.Compare(strings.Join(a, ""), strings.Join(b, "")); got != want {
			t.Fatalf("%q vs %q: %d, want %d", a, b, got, want)
		}
	}
}
