package textgraph

import (
	"context"
	"math"
	"sort"
	"strings"
)

// Seed is a node the walk restarts at, with its weight (the
// personalization; they are normalised to sum 1) and why it is a seed.
type Seed struct {
	Key string  `json:"key"`
	W   float64 `json:"w"`
	Why string  `json:"why"` // "question entity", "question phrase", "similar phrase", "dense passage"
}

// RankParams set the walk: Damping is the probability of following an
// edge rather than restarting at a seed (HippoRAG 2: 0.5); the iteration
// stops after MaxIterations or when the scores move less than Tolerance
// (L1).
type RankParams struct {
	Damping       float64
	MaxIterations int
	Tolerance     float64
}

// DefaultRankParams are HippoRAG 2's damping and a tight tolerance.
func DefaultRankParams() RankParams {
	return RankParams{Damping: 0.5, MaxIterations: 100, Tolerance: 1e-9}
}

// Step is one step of the path that carried a passage its score.
type Step struct {
	Key   string   `json:"key"`
	Label string   `json:"label"`
	Kind  EdgeKind `json:"kind"` // the edge taken to reach Key
}

// Ranked is a passage of the subgraph with its personalized PageRank score
// and the path that carried most of it: from a seed, the path of highest
// product of seed weight and transition probabilities.
type Ranked struct {
	Doc   string  `json:"doc"`
	Score float64 `json:"score"`
	Seed  Seed    `json:"seed"`
	Path  []Step  `json:"path"`
}

// Rank runs personalized PageRank over sg from seeds (keys absent from sg
// are ignored) and returns its passages best first (ties: document ID),
// each with its best path. Edges are walked both ways, a node's transitions
// in proportion to its edges' weights; a node without edges returns its
// mass to the seeds. It honours ctx between iterations.
func Rank(ctx context.Context, sg Subgraph, seeds []Seed, p RankParams) ([]Ranked, error) {
	reset, seedOf := personalization(sg, seeds)
	if reset == nil {
		return nil, nil
	}
	out := transitions(sg)
	x, err := pageRank(ctx, out, reset, p)
	if err != nil {
		return nil, err
	}
	from, via := bestPaths(sg, out, reset, p.Damping)
	return rankedPassages(sg, seeds, x, seedOf, from, via), nil
}

// personalization is the restart distribution over sg's nodes (the seeds'
// weights, normalised) and, per node, the index of its heaviest seed (-1:
// none). reset is nil when no seed with weight is in sg.
func personalization(sg Subgraph, seeds []Seed) (reset []float64, seedOf []int) {
	n := len(sg.Nodes)
	at := make(map[string]int, n)
	for i, nd := range sg.Nodes {
		at[nd.Key] = i
	}
	reset = make([]float64, n)
	seedOf = make([]int, n)
	for i := range seedOf {
		seedOf[i] = -1
	}
	var total float64
	for si, s := range seeds {
		if i, ok := at[s.Key]; ok && s.W > 0 {
			reset[i] += s.W
			total += s.W
			if seedOf[i] < 0 || seeds[seedOf[i]].W < s.W {
				seedOf[i] = si
			}
		}
	}
	if total == 0 {
		return nil, nil
	}
	for i := range reset {
		reset[i] /= total
	}
	return reset, seedOf
}

// arc is one direction of an edge with its transition probability.
type arc struct {
	to   int32
	kind EdgeKind
	p    float64
}

// arcs are every node's outgoing arcs in one slice: node i's are
// list[start[i]:start[i+1]] (one allocation, and the walk reads them in
// order).
type arcs struct {
	start []int32
	list  []arc
}

func (a arcs) of(i int) []arc { return a.list[a.start[i]:a.start[i+1]] }

// transitions lists each node's outgoing arcs, both directions of every
// edge of positive weight, in proportion to the node's total edge weight,
// each node's in the order of the edges.
func transitions(sg Subgraph) arcs {
	n := len(sg.Nodes)
	sum := make([]float64, n)
	count := make([]int32, n+1)
	for _, e := range sg.Edges {
		sum[e.A] += e.W
		sum[e.B] += e.W
		if e.W > 0 {
			count[e.A+1]++
			count[e.B+1]++
		}
	}
	for i := 1; i <= n; i++ {
		count[i] += count[i-1]
	}
	out := arcs{start: append([]int32(nil), count...), list: make([]arc, count[n])}
	next := count[:n]
	for _, e := range sg.Edges {
		if e.W <= 0 {
			continue
		}
		out.list[next[e.A]] = arc{int32(e.B), e.Kind, e.W / sum[e.A]}
		next[e.A]++
		out.list[next[e.B]] = arc{int32(e.A), e.Kind, e.W / sum[e.B]}
		next[e.B]++
	}
	return out
}

// pageRank iterates from reset until the scores move less than
// p.Tolerance or p.MaxIterations pass; dangling nodes' mass restarts.
func pageRank(ctx context.Context, out arcs, reset []float64, p RankParams) ([]float64, error) {
	x := append([]float64(nil), reset...)
	next := make([]float64, len(reset))
	for it := 0; it < p.MaxIterations; it++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dangling := 0.0
		for i := range next {
			next[i] = 0
		}
		for i := range x {
			as := out.of(i)
			if len(as) == 0 {
				dangling += x[i]
				continue
			}
			for _, a := range as {
				next[a.to] += x[i] * a.p
			}
		}
		delta := 0.0
		for i := range next {
			v := p.Damping*(next[i]+dangling*reset[i]) + (1-p.Damping)*reset[i]
			delta += math.Abs(v - x[i])
			next[i] = v
		}
		x, next = next, x
		if delta < p.Tolerance {
			break
		}
	}
	return x, nil
}

// bestPaths finds the best path to each node: the highest product of the
// seed's share and the transitions on the way, found by relaxing every arc
// as many times as the subgraph is deep. from[i] is the node before i
// (-1 at a seed or an unreached node), via[i] the edge taken.
func bestPaths(sg Subgraph, out arcs, reset []float64, damping float64) (from []int, via []EdgeKind) {
	n := len(sg.Nodes)
	best := make([]float64, n)
	from = make([]int, n)
	via = make([]EdgeKind, n)
	for i := range from {
		from[i] = -1
		best[i] = reset[i]
	}
	depth := 0
	for _, nd := range sg.Nodes {
		depth = max(depth, nd.Hop)
	}
	for round := 0; round <= depth+1; round++ {
		changed := false
		for i := range best {
			if best[i] == 0 {
				continue
			}
			for _, a := range out.of(i) {
				if v := best[i] * a.p * damping; v > best[a.to] && reset[a.to] == 0 {
					best[a.to], from[a.to], via[a.to] = v, i, a.kind
					changed = true
				}
			}
		}
		if !changed {
			break
		}
	}
	return from, via
}

// rankedPassages turns the scores into the passages with a positive score,
// each with its path traced back through from and the seed it starts at,
// best first (ties: document ID).
func rankedPassages(sg Subgraph, seeds []Seed, x []float64, seedOf, from []int, via []EdgeKind) []Ranked {
	n := len(sg.Nodes)
	var res []Ranked
	for i, nd := range sg.Nodes {
		if KindOf(nd.Key) != PassageNode || x[i] <= 0 {
			continue
		}
		r := Ranked{Doc: DocumentID(nd.Key), Score: x[i]}
		var steps []Step
		j := i
		// guard stops a cycle in from, which the relaxation should not make.
		for guard := 0; j >= 0 && guard <= n; guard++ {
			steps = append(steps, Step{Key: sg.Nodes[j].Key, Label: sg.Nodes[j].Label, Kind: via[j]})
			if from[j] < 0 {
				break
			}
			j = from[j]
		}
		for a, b := 0, len(steps)-1; a < b; a, b = a+1, b-1 {
			steps[a], steps[b] = steps[b], steps[a]
		}
		if j >= 0 && seedOf[j] >= 0 {
			r.Seed = seeds[seedOf[j]]
		}
		r.Path = steps
		res = append(res, r)
	}
	sort.Slice(res, func(a, b int) bool {
		if res[a].Score != res[b].Score {
			return res[a].Score > res[b].Score
		}
		return res[a].Doc < res[b].Doc
	})
	return res
}

// PathText is a path as an explanation reads it: "Christopher Nolan
// (question entity) -[contains]- Inception -[contains]- Leonardo DiCaprio".
func PathText(r Ranked) string {
	var b strings.Builder
	for i, s := range r.Path {
		if i > 0 {
			b.WriteString(" -[" + s.Kind.String() + "]- ")
		}
		l := s.Label
		if l == "" {
			l = s.Key
		}
		b.WriteString(l)
		if i == 0 && r.Seed.Why != "" {
			b.WriteString(" (" + r.Seed.Why + ")")
		}
	}
	return b.String()
}
