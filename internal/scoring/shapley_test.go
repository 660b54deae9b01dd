package scoring

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// handGame is worked out by hand below: three query subgraphs, the first two
// fully inside the document's nodes, the third outside it.
//
//	g1 = {0,1}, g2 = {1,2}, g3 = {3,4,5}; nodes(G_D) ∩ universe = {0,1,2}
//	best = [0.8, 0.4, 0]; lambda = 0.5
//	v(1)=0.9 v(2)=0.7 v(3)=0 v(12)=0.8 v(13)=0.4 v(23)=0.3 v(123)=0.45
func handGame() *Game {
	return NewGame(0.5, 6, [][]int{{0, 1}, {1, 2}, {3, 4, 5}}, []bool{true, true, true, false, false, false}, []float64{0.8, 0.4, 0})
}

func TestHandWorkedGame(t *testing.T) {
	g := handGame()
	values := map[string][]int{"1": {0}, "2": {1}, "3": {2}, "12": {0, 1}, "13": {0, 2}, "23": {1, 2}, "123": {0, 1, 2}}
	want := map[string]float64{"1": 0.9, "2": 0.7, "3": 0, "12": 0.8, "13": 0.4, "23": 0.3, "123": 0.45}
	for k, m := range values {
		if got := g.Value(m); math.Abs(got-want[k]) > 1e-12 {
			t.Errorf("v(%s) = %v, want %v", k, got, want[k])
		}
	}
	// phi1 is 1/3*0.9 + 1/6*(0.8-0.7) + 1/6*(0.4-0) + 1/3*(0.45-0.3)
	// phi2 is 1/3*0.7 + 1/6*(0.8-0.9) + 1/6*(0.3-0) + 1/3*(0.45-0.4)
	// phi3 is 1/3*0   + 1/6*(0.4-0.9) + 1/6*(0.3-0.7) + 1/3*(0.45-0.8)
	wantPhi := []float64{0.3 + 0.1/6 + 0.4/6 + 0.05, 0.7/3 - 0.1/6 + 0.3/6 + 0.05/3, -0.5/6 - 0.4/6 - 0.35/3}
	phi := g.ShapleyExact()
	for j := range wantPhi {
		if math.Abs(phi[j]-wantPhi[j]) > 1e-12 {
			t.Errorf("phi%d = %v, want %v", j+1, phi[j], wantPhi[j])
		}
	}
	if math.Abs(g.Ent()-0.45/3) > 1e-12 {
		t.Errorf("ent = %v, want F(G_Q)/|G_Q| = 0.15", g.Ent())
	}
	if g.Value(nil) != 0 {
		t.Error("F(empty) must be 0")
	}
}

func randomGame(r *rand.Rand, n int) *Game {
	universe := 40
	nodes := make([][]int, n)
	for j := range nodes {
		k := 1 + r.IntN(10)
		for i := 0; i < k; i++ {
			nodes[j] = append(nodes[j], r.IntN(universe))
		}
	}
	in := make([]bool, universe)
	for i := range in {
		in[i] = r.Float64() < 0.4
	}
	best := make([]float64, n)
	for j := range best {
		best[j] = r.Float64()
	}
	return NewGame(r.Float64(), universe, nodes, in, best)
}

func TestShapleyAxioms(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 50; trial++ {
		n := 1 + r.IntN(8)
		g := randomGame(r, n)
		phi := g.ShapleyExact()
		// Efficiency: the values sum to F(G_Q) - F(empty).
		sum := 0.0
		for _, p := range phi {
			sum += p
		}
		if math.Abs(sum-g.Grand()) > 1e-9 {
			t.Fatalf("efficiency: sum phi = %v, F(G_Q) = %v", sum, g.Grand())
		}
	}
	// Symmetry: two players with identical nodes and similarity get equal values.
	g := NewGame(0.3, 10, [][]int{{0, 1, 2}, {0, 1, 2}, {5, 6}, {2, 7}}, []bool{true, false, true, false, false, true, false, true, false, false}, []float64{0.6, 0.6, 0.1, 0.9})
	phi := g.ShapleyExact()
	if math.Abs(phi[0]-phi[1]) > 1e-12 {
		t.Errorf("symmetry: phi0 = %v, phi1 = %v", phi[0], phi[1])
	}
	// Null player: a player with no nodes, in a game where similarity does
	// not count (lambda = 1), never changes the value, so its Shapley value is 0.
	zero := NewGame(1, 4, [][]int{{0, 1}, {}}, []bool{true, false, false, false}, []float64{0, 0})
	if p := zero.ShapleyExact(); math.Abs(p[1]) > 1e-12 || math.Abs(p[0]-0.5) > 1e-12 {
		t.Errorf("null player: phi = %v, want [0.5 0]", p)
	}
}

func TestMonteCarloConverges(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	g := randomGame(r, 6)
	exact := g.ShapleyExact()
	rmse := func(T int) float64 {
		// Average the squared error over independent seeds.
		const reps = 40
		se := 0.0
		for rep := 0; rep < reps; rep++ {
			est := mustMC(t, g, T, NewRand(uint64(rep), "conv"))
			for j := range est {
				se += (est[j] - exact[j]) * (est[j] - exact[j])
			}
		}
		return math.Sqrt(se / float64(reps*len(exact)))
	}
	e10, e160, e2560 := rmse(10), rmse(160), rmse(2560)
	t.Logf("RMSE: T=10 %.5f, T=160 %.5f, T=2560 %.5f", e10, e160, e2560)
	// 1/sqrt(T): 16x the samples should cut the error about 4x; allow 2.5x-6.5x.
	for _, c := range []struct{ a, b float64 }{{e10, e160}, {e160, e2560}} {
		if ratio := c.a / c.b; ratio < 2.5 || ratio > 6.5 {
			t.Errorf("error ratio for 16x samples = %.2f, want about 4 (1/sqrt(T))", ratio)
		}
	}
	if e2560 > 0.01 {
		t.Errorf("Monte Carlo with T=2560 is %.4f away from the exact values", e2560)
	}
}

func TestMonteCarloSeeded(t *testing.T) {
	g := handGame()
	a := mustMC(t, g, 50, NewRand(42, "doc"))
	b := mustMC(t, g, 50, NewRand(42, "doc"))
	c := mustMC(t, g, 50, NewRand(43, "doc"))
	for j := range a {
		if a[j] != b[j] {
			t.Fatalf("same seed, different estimates: %v vs %v", a, b)
		}
	}
	same := true
	for j := range a {
		same = same && a[j] == c[j]
	}
	if same {
		t.Errorf("different seeds gave identical estimates %v", a)
	}
}

func TestZScores(t *testing.T) {
	got := ZScores([]float64{1, 2, 3, 4})
	// mean 2.5, population std sqrt(1.25)
	s := math.Sqrt(1.25)
	want := []float64{-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("z[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	for _, z := range ZScores([]float64{3, 3, 3}) {
		if z != 0 {
			t.Errorf("constant scores must give 0, got %v", z)
		}
	}
	if len(ZScores(nil)) != 0 {
		t.Error("empty input")
	}
}

func mustMC(t *testing.T, g *Game, T int, rng *rand.Rand) []float64 {
	t.Helper()
	phi, err := g.ShapleyMonteCarlo(context.Background(), T, rng)
	if err != nil {
		t.Fatal(err)
	}
	return phi
}

// The estimator's cost grows with the request's samples: it must stop when
// the request's context ends, not run its T trials to the end.
func TestMonteCarloStopsWhenTheContextEnds(t *testing.T) {
	g := NewGame(0.5, 8, [][]int{{0, 1}, {2, 3}, {4}}, []bool{true, false, true, false, true, false, false, false}, []float64{0.1, 0.2, 0.3})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.ShapleyMonteCarlo(ctx, 1_000_000, NewRand(1, "x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
