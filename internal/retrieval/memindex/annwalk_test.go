package memindex

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/dmar-kg/dmar/internal/vec"
)

// walkGraph is a graph of n random unit vectors of dim, each linked to deg
// random nodes on one level: not a search graph (its walks find nothing in
// particular), but one whose walks read memory as a large HNSW graph's do,
// in no useful order, built in seconds instead of the minutes a real graph
// of a million nodes takes.
func walkGraph(n, dim, deg int) *hnsw {
	rng := rand.New(rand.NewPCG(1, 2))
	h := newHNSW(dim, 400, 1)
	nodes := make([]*hnode, n)
	for i := range nodes {
		v := randVec(rng, dim, 1)
		nodes[i] = &hnode{id: int32(i), slot: int32(i), vec: v, norm: vec.Norm(v), links: make([]atomic.Pointer[[]link], 1)}
	}
	for _, nd := range nodes {
		ls := make([]link, deg)
		for j := range ls {
			ls[j] = link{id: int32(rng.IntN(n))}
		}
		nd.links[0].Store(&ls)
	}
	h.nodes.Store(&nodes)
	h.entry.Store(nodes[0])
	return h
}

// layerOneByOne is layer as it was before it gathered the neighbours
// first: each neighbour's distance computed as it is met. The baseline of
// BenchmarkANNWalk.
func (h *hnsw) layerOneByOne(nodes []*hnode, v []float32, qn float64, entry []cand, ef, l int) []cand {
	vs, todo, found := h.startWalk(len(nodes), entry, ef)
	defer h.pool.Put(vs)
	for len(todo) > 0 {
		c := todo.pop()
		if len(found.h) == ef && c.dist > found.h[0].dist {
			break
		}
		for _, k := range h.links(nodes, c.id, l) {
			id := k.id
			if int(id) >= len(nodes) || vs.seen[id] == vs.stamp {
				continue
			}
			vs.seen[id] = vs.stamp
			n := cand{id, distance(v, qn, nodes[id])}
			if len(found.h) < ef || closer(n, found.h[0]) {
				todo.push(n)
				found.push(n)
			}
		}
	}
	return found.sorted()
}

// TestANNWalkSameAsOneByOne: gathering the neighbours first changes when
// distances are computed, not what the walk finds.
func TestANNWalkSameAsOneByOne(t *testing.T) {
	h := walkGraph(20_000, 64, 24)
	nodes := *h.nodes.Load()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		v := randVec(rng, 64, 1)
		entry := []cand{{0, distance(v, vec.Norm(v), nodes[0])}}
		a := h.layer(nodes, v, vec.Norm(v), entry, 200, 0)
		b := h.layerOneByOne(nodes, v, vec.Norm(v), entry, 200, 0)
		if len(a) != len(b) {
			t.Fatalf("%d found, %d one by one", len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("found[%d] = %v, one by one %v", i, a[i], b[i])
			}
		}
	}
}

// BenchmarkANNWalk times one level-0 walk (ef 400) over a million 384-d
// vectors, the size at which the graph's memory misses dominate: the walk
// as dmar runs it (gathered) beside the one-by-one baseline.
//
//	go test -run '^$' -bench ANNWalk -benchtime 200x ./internal/retrieval/memindex/
func BenchmarkANNWalk(b *testing.B) {
	if testing.Short() {
		b.Skip("builds a million-node graph (2 GB)")
	}
	h := walkGraph(1_000_000, 384, 32)
	nodes := *h.nodes.Load()
	rng := rand.New(rand.NewPCG(5, 6))
	qs := make([][]float32, 64)
	for i := range qs {
		qs[i] = randVec(rng, 384, 1)
	}
	for _, c := range []struct {
		name string
		walk func([]*hnode, []float32, float64, []cand, int, int) []cand
	}{{"one-by-one", h.layerOneByOne}, {"gathered", h.layer}} {
		b.Run(c.name, func(b *testing.B) {
			for i := range b.N {
				v := qs[i%len(qs)]
				start := nodes[rng.IntN(len(nodes))]
				c.walk(nodes, v, vec.Norm(v), []cand{{start.id, distance(v, vec.Norm(v), start)}}, 400, 0)
			}
		})
	}
}

// TestANNEfGrowsWithTheGraph: the default ef is DefaultANNEf up to
// 128,000 vectors and then grows as the cube root of the graph's size;
// a configured one holds at every size.
func TestANNEfGrowsWithTheGraph(t *testing.T) {
	for _, c := range []struct{ n, ef int }{{1000, 400}, {128_000, 400}, {128_001, 400}, {500_000, 650}, {1_000_000, 800}, {8_000_000, 1600}} {
		if got := (Params{}).annEf(c.n); got != c.ef {
			t.Errorf("default ef at %d vectors: %d, want %d", c.n, got, c.ef)
		}
	}
	if got := (Params{ANNEf: 300}).annEf(1_000_000); got != 300 {
		t.Errorf("configured ef 300 at 1,000,000 vectors: %d", got)
	}
}
