package graphfeat

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat/graphfeattest"
)

// The allocation-light Featurize must give, bit for bit, what the first
// (map-based) implementation gave, since the committed GNN was trained on
// it: real codexm subgraphs at several pad sizes, plus odd inputs (duplicate
// nodes and statements, self loops, several relations per pair, dangling
// edges, out-of-range hops), through both Featurize and a reused
// FeaturizeInto buffer.
func TestFeaturizeMatchesFirstImplementation(t *testing.T) {
	gs := append(realSubgraphs(t), oddSubgraphs()...)
	var reused Batch
	for _, n := range []int{1, 8, DefaultN, 100} {
		for lo := 0; lo < len(gs); lo += 97 {
			chunk := gs[lo:min(lo+97, len(gs))]
			want := oldFeaturize(chunk, n)
			got, err := Featurize(chunk, n)
			if err != nil {
				t.Fatal(err)
			}
			sameBatch(t, fmt.Sprintf("n=%d graphs %d..", n, lo), got, want)
			if err := FeaturizeInto(&reused, chunk, n); err != nil {
				t.Fatal(err)
			}
			sameBatch(t, fmt.Sprintf("FeaturizeInto n=%d graphs %d..", n, lo), reused, want)
		}
	}
	t.Logf("%d subgraphs identical at n = 1, 8, 64, 100", len(gs))
}

func TestHashesMatchStringConcatenation(t *testing.T) {
	for _, s := range []string{"", "Q42", "P31", "Q123456789", "ü"} {
		if got, want := entityHash(s), splitmix64(fnv1a64("Q:"+s)); got != want {
			t.Errorf("entityHash(%q) = %x, want %x", s, got, want)
		}
		if got, want := relHash(s), splitmix64(fnv1a64("P:"+s)); got != want {
			t.Errorf("relHash(%q) = %x, want %x", s, got, want)
		}
	}
}

func TestFeaturizeIntoAllocatesNothingOnceWarm(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under -race are meaningless (sync.Pool drops items)")
	}
	gs := oddSubgraphs()
	var b Batch
	_ = FeaturizeInto(&b, gs, DefaultN)
	if a := testing.AllocsPerRun(20, func() { _ = FeaturizeInto(&b, gs, DefaultN) }); a > 0 {
		t.Fatalf("FeaturizeInto into a warm buffer: %v allocations per call, want 0", a)
	}
}

func sameBatch(t *testing.T, what string, got, want Batch) {
	t.Helper()
	if got.B != want.B || got.N != want.N {
		t.Fatalf("%s: B,N = %d,%d, want %d,%d", what, got.B, got.N, want.B, want.N)
	}
	for _, s := range []struct {
		name      string
		got, want []float32
	}{{"X", got.X, want.X}, {"AdjOut", got.AdjOut, want.AdjOut}, {"AdjIn", got.AdjIn, want.AdjIn}, {"Mask", got.Mask, want.Mask}} {
		if len(s.got) != len(s.want) {
			t.Fatalf("%s: len(%s) = %d, want %d", what, s.name, len(s.got), len(s.want))
		}
		for i := range s.want {
			if math.Float32bits(s.got[i]) != math.Float32bits(s.want[i]) {
				t.Fatalf("%s: %s[%d] = %v, want %v", what, s.name, i, s.got[i], s.want[i])
			}
		}
	}
}

// realSubgraphs are the default (1-hop, 64-node) subgraphs of every 11th
// codexm entity and the 2-hop ones of every 50th.
func realSubgraphs(t *testing.T) []kg.Subgraph {
	t.Helper()
	g := graphfeattest.Codexm(t)
	var roots1, roots2 []string
	for i, e := range g.AllEntities() {
		if i%11 == 0 {
			roots1 = append(roots1, e.QID)
		}
		if i%50 == 0 {
			roots2 = append(roots2, e.QID)
		}
	}
	var out []kg.Subgraph
	for _, c := range []struct {
		roots []string
		p     kg.SubgraphParams
	}{
		{roots1, kg.DefaultSubgraphParams()},
		{roots2, kg.SubgraphParams{Hops: 2, MaxNodes: 120, HubDegree: 500}},
	} {
		m, err := g.Subgraphs(context.Background(), c.roots, c.p)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.roots {
			out = append(out, m[r])
		}
	}
	return out
}

func oddSubgraphs() []kg.Subgraph {
	return []kg.Subgraph{
		{},
		{Root: "Q1", Nodes: []kg.Node{{QID: "Q1"}, {QID: "Q2", Hop: 7, Hub: true}, {QID: "Q1", Hop: 2}, {QID: "Q3", Hop: -1}},
			Edges: []kg.Edge{
				{From: "Q1", To: "Q2", PID: "P1"}, {From: "Q1", To: "Q2", PID: "P1"}, {From: "Q1", To: "Q2", PID: "P2"},
				{From: "Q2", To: "Q1", PID: "P1"}, {From: "Q3", To: "Q3", PID: "P9"}, {From: "Q3", To: "Q404", PID: "P1"},
				{From: "Q1", To: "Q2", PID: "P2"}, {From: "Q3", To: "Q1", PID: "P1"}, {From: "Q3", To: "Q1", PID: "P5"},
			}},
		path("Q1", "Q2", "Q3"),
	}
}

// fnv1a64 is FNV-1a, 64 bit, as the first implementation computed it.
func fnv1a64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// oldFeaturize is the first implementation of Featurize, kept verbatim (but
// for its sketches, which use the string-concatenating hash) as the oracle.
func oldFeaturize(gs []kg.Subgraph, n int) Batch {
	b := Batch{
		B: len(gs), N: n,
		X:      make([]float32, len(gs)*n*F),
		AdjOut: make([]float32, len(gs)*n*n),
		AdjIn:  make([]float32, len(gs)*n*n),
		Mask:   make([]float32, len(gs)*n),
	}
	for i, g := range gs {
		oldFill(&b, i, g)
	}
	return b
}

// oldSketch is the first sign vector of a "Q:"/"P:"-prefixed id: n signs
// of scale from the bits of its string hash.
func oldSketch(key string, n int, scale float32) []float32 {
	out := make([]float32, n)
	h := splitmix64(fnv1a64(key))
	for k := range out {
		out[k] = -scale
		if h>>k&1 == 1 {
			out[k] = scale
		}
	}
	return out
}

func oldFill(b *Batch, gi int, g kg.Subgraph) {
	n := b.N
	idx := make(map[string]int, len(g.Nodes))
	for _, nd := range g.Nodes {
		if len(idx) == n {
			break
		}
		if _, dup := idx[nd.QID]; !dup {
			idx[nd.QID] = len(idx)
		}
	}
	x := b.X[gi*n*F : (gi+1)*n*F]
	outDeg := make([]int, n)
	inDeg := make([]int, n)
	type pair struct{ from, to int }
	seen := map[pair]bool{}
	type rel struct {
		from, to int
		pid      string
	}
	var rels []rel
	seenRel := map[rel]bool{}
	for _, e := range g.Edges {
		f, okf := idx[e.From]
		t, okt := idx[e.To]
		if !okf || !okt {
			continue
		}
		r := rel{f, t, e.PID}
		if seenRel[r] {
			continue
		}
		seenRel[r] = true
		rels = append(rels, r)
		if p := (pair{f, t}); !seen[p] {
			seen[p] = true
			outDeg[f]++
			inDeg[t]++
		}
	}
	outRel := make([]int, n)
	inRel := make([]int, n)
	for _, r := range rels {
		s := oldSketch("P:"+r.pid, RelDims, 1)
		for k := 0; k < RelDims; k++ {
			x[r.from*F+offOutRel+k] += s[k]
			x[r.to*F+offInRel+k] += s[k]
		}
		outRel[r.from]++
		inRel[r.to]++
	}
	for p := range seen {
		b.AdjOut[gi*n*n+p.from*n+p.to] = 1 / float32(outDeg[p.from])
		b.AdjIn[gi*n*n+p.to*n+p.from] = 1 / float32(inDeg[p.to])
	}
	logN := math.Log(65)
	for _, nd := range g.Nodes {
		i, ok := idx[nd.QID]
		if !ok || b.Mask[gi*n+i] == 1 {
			continue
		}
		b.Mask[gi*n+i] = 1
		row := x[i*F : (i+1)*F]
		copy(row[:EntityDims], oldSketch("Q:"+nd.QID, EntityDims, EntityScale))
		for k := 0; k < RelDims; k++ {
			if outRel[i] > 0 {
				row[offOutRel+k] /= float32(outRel[i])
			}
			if inRel[i] > 0 {
				row[offInRel+k] /= float32(inRel[i])
			}
		}
		h := nd.Hop
		if h < 0 {
			h = 0
		}
		if h > 3 {
			h = 3
		}
		row[offHop+h] = 1
		if nd.Hub {
			row[offHub] = 1
		}
		row[offOutDeg] = float32(math.Log1p(float64(outDeg[i])) / logN)
		row[offInDeg] = float32(math.Log1p(float64(inDeg[i])) / logN)
		row[offReal] = 1
	}
}

// Featurize shares pooled scratch between goroutines: concurrent calls give
// what sequential ones give (run with -race).
func TestFeaturizeConcurrent(t *testing.T) {
	gs := append(oddSubgraphs(), path("Q5", "Q6", "Q7"), path("Q8", "Q5"))
	want := oldFeaturize(gs, 8)
	errc := make(chan error, 8)
	for w := 0; w < 8; w++ {
		go func() {
			var b Batch
			for i := 0; i < 50; i++ {
				if err := FeaturizeInto(&b, gs, 8); err != nil {
					errc <- err
					return
				}
				for k := range want.X {
					if b.X[k] != want.X[k] {
						errc <- fmt.Errorf("X[%d] = %v, want %v", k, b.X[k], want.X[k])
						return
					}
				}
			}
			errc <- nil
		}()
	}
	for w := 0; w < 8; w++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}
