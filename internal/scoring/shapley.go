package scoring

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
)

// Game is the structural game of one document D: the players are the query
// subgraphs G_Q, and the value of a coalition S is the utility
//
//	F(S, G_D) = lambda*cov(S, G_D) + (1-lambda)*sim(S, G_D),  F(empty) = 0
//	cov = |nodes(S) ∩ nodes(G_D)| / |nodes(S)|
//	sim = mean over s in S of max(0, max over d in G_D of cos(GNN(s), GNN(d)))
//
// Node sets are bitsets over the union of the query subgraphs' nodes, so a
// coalition's value costs a few word operations.
type Game struct {
	Lambda float64
	nodes  [][]uint64 // per player: its nodes
	inDoc  []uint64   // query-universe nodes that are also nodes of G_D
	best   []float64  // per player: max(0, max_d sim)
	words  int
}

// NewGame builds a game. playerNodes[j] lists player j's nodes as indices in
// [0, universe); inDoc[i] says whether universe node i is a node of G_D;
// best[j] is max(0, max over G_D of sim(g_j, d)).
func NewGame(lambda float64, universe int, playerNodes [][]int, inDoc []bool, best []float64) *Game {
	w := (universe + 63) / 64
	g := &Game{Lambda: lambda, words: w, inDoc: make([]uint64, w), best: best}
	for i, in := range inDoc {
		if in {
			g.inDoc[i/64] |= 1 << (i % 64)
		}
	}
	g.nodes = make([][]uint64, len(playerNodes))
	for j, ns := range playerNodes {
		b := make([]uint64, w)
		for _, i := range ns {
			b[i/64] |= 1 << (i % 64)
		}
		g.nodes[j] = b
	}
	return g
}

// Players is |G_Q|.
func (g *Game) Players() int { return len(g.nodes) }

// Value is F(S, G_D) for the coalition of the listed players.
func (g *Game) Value(members []int) float64 {
	if len(members) == 0 {
		return 0
	}
	union := make([]uint64, g.words)
	sim := 0.0
	for _, j := range members {
		for w, x := range g.nodes[j] {
			union[w] |= x
		}
		sim += g.best[j]
	}
	return g.value(union, sim/float64(len(members)))
}

func (g *Game) value(union []uint64, sim float64) float64 {
	all, hit := 0, 0
	for w, x := range union {
		all += bits.OnesCount64(x)
		hit += bits.OnesCount64(x & g.inDoc[w])
	}
	cov := 0.0
	if all > 0 {
		cov = float64(hit) / float64(all)
	}
	return g.Lambda*cov + (1-g.Lambda)*sim
}

// valueMask is Value for a coalition given as a bit mask (players < 64).
func (g *Game) valueMask(mask uint64, union []uint64) float64 {
	if mask == 0 {
		return 0
	}
	for w := range union {
		union[w] = 0
	}
	sim, n := 0.0, 0
	for m := mask; m != 0; m &= m - 1 {
		j := bits.TrailingZeros64(m)
		for w, x := range g.nodes[j] {
			union[w] |= x
		}
		sim += g.best[j]
		n++
	}
	return g.value(union, sim/float64(n))
}

// Grand is F(G_Q, G_D).
func (g *Game) Grand() float64 {
	all := make([]int, g.Players())
	for j := range all {
		all[j] = j
	}
	return g.Value(all)
}

// Ent is the structural score exactly: by the efficiency axiom the Shapley
// values sum to F(G_Q) - F(empty), so ent = (1/|G_Q|) sum phi_j = F(G_Q)/|G_Q|.
func (g *Game) Ent() float64 {
	if g.Players() == 0 {
		return 0
	}
	return g.Grand() / float64(g.Players())
}

// MaxExactPlayers bounds exact Shapley enumeration (2^n coalitions).
const MaxExactPlayers = 12

// ShapleyExact computes every player's Shapley value by enumerating all
// coalitions. It needs Players() <= MaxExactPlayers.
func (g *Game) ShapleyExact() []float64 {
	n := g.Players()
	if n > MaxExactPlayers {
		panic("scoring: ShapleyExact over too many players")
	}
	phi := make([]float64, n)
	if n == 0 {
		return phi
	}
	v := make([]float64, 1<<n)
	union := make([]uint64, g.words)
	for m := uint64(1); m < 1<<n; m++ {
		v[m] = g.valueMask(m, union)
	}
	// weight[s] = s!(n-s-1)!/n!
	weight := make([]float64, n)
	for s := 0; s < n; s++ {
		weight[s] = math.Exp(lgamma(s+1) + lgamma(n-s) - lgamma(n+1))
	}
	for j := 0; j < n; j++ {
		bit := uint64(1) << j
		for m := uint64(0); m < 1<<n; m++ {
			if m&bit != 0 {
				continue
			}
			phi[j] += weight[bits.OnesCount64(m)] * (v[m|bit] - v[m])
		}
	}
	return phi
}

func lgamma(x int) float64 {
	l, _ := math.Lgamma(float64(x))
	return l
}

// ShapleyMonteCarlo is the paper's estimator (Algorithm 1): for each player,
// T trials of a random permutation of the other players and a uniformly
// random prefix length in 0..n-1 as the coalition, averaging the marginal
// contribution. rng makes it reproducible.
func (g *Game) ShapleyMonteCarlo(ctx context.Context, T int, rng *rand.Rand) ([]float64, error) {
	n := g.Players()
	phi := make([]float64, n)
	if n == 0 || T <= 0 {
		return phi, nil
	}
	others := make([]int, 0, n-1)
	coal := make([]int, 0, n)
	for j := 0; j < n; j++ {
		others = others[:0]
		for k := 0; k < n; k++ {
			if k != j {
				others = append(others, k)
			}
		}
		sum := 0.0
		for t := 0; t < T; t++ {
			// The cost grows with the request's samples and entities: check
			// the deadline often enough to stop within a few milliseconds.
			if t%mcCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			rng.Shuffle(len(others), func(a, b int) { others[a], others[b] = others[b], others[a] })
			l := rng.IntN(n) // prefix length 0..n-1
			coal = append(coal[:0], others[:l]...)
			without := g.Value(coal)
			coal = append(coal, j)
			sum += g.Value(coal) - without
		}
		phi[j] = sum / float64(T)
	}
	return phi, nil
}

// mcCheckEvery is how many Monte Carlo trials run between deadline checks.
const mcCheckEvery = 64

// MonteCarloEvaluations is the number of game evaluations the Monte Carlo
// estimator makes for players players and T trials each: the unit in which
// a request's structural cost is budgeted.
func MonteCarloEvaluations(players, T int) int64 { return 2 * int64(players) * int64(T) }

// NewRand returns the deterministic generator used for Monte Carlo mode.
func NewRand(seed uint64, stream string) *rand.Rand {
	h := uint64(14695981039346656037)
	for i := 0; i < len(stream); i++ {
		h ^= uint64(stream[i])
		h *= 1099511628211
	}
	return rand.New(rand.NewPCG(seed, h))
}
