package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Subgraphs times one Subgraphs call of Seeds roots on the embedded graph
// and on another backend over the same data (dmar bench subgraphs): every
// round draws its roots once, seeded, and both graphs answer the same call,
// in alternating order so that a busy machine slows both alike. The answers
// are compared too: a fast backend that answers differently is no win.
type Subgraphs struct {
	Embedded  kg.Graph
	Given     kg.Graph
	GivenName string   // named in the report
	Pool      []string // the QIDs roots are drawn from
	Seeds     int      // roots per call
	Rounds    int      // timed calls per graph, after one untimed warm-up
	Seed      uint64
	Params    kg.SubgraphParams
	// Channel times the graph channel's call, kg.Neighbourhoods (hub roots
	// as stars, the walked nodes' edges only), instead of Subgraphs.
	Channel bool
}

// Validate names the first setting that cannot be run.
func (b Subgraphs) Validate() error {
	switch {
	case b.Embedded == nil || b.Given == nil:
		return fmt.Errorf("bench subgraphs: two graphs are needed")
	case b.Seeds < 1:
		return fmt.Errorf("bench subgraphs: --seeds %d: want at least 1", b.Seeds)
	case b.Rounds < 1:
		return fmt.Errorf("bench subgraphs: --rounds %d: want at least 1", b.Rounds)
	case len(b.Pool) < b.Seeds:
		return fmt.Errorf("bench subgraphs: --seeds %d: the graph has only %d entities", b.Seeds, len(b.Pool))
	}
	return nil
}

// roots draws round r's roots without repeats.
func (b Subgraphs) roots(r int) []string {
	rng := rand.New(rand.NewPCG(b.Seed, uint64(r)))
	idx := rng.Perm(len(b.Pool))[:b.Seeds]
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = b.Pool[j]
	}
	return out
}

// subgraphSeries is one graph's timings and the size of its answers.
type subgraphSeries struct {
	name         string
	g            kg.Graph
	ms           []float64
	nodes, edges int
}

// subgraphDiff counts the roots whose subgraphs the two graphs answered
// differently.
type subgraphDiff struct {
	compared, differ int
	first            string
}

// Run writes the table to stdout, ending with p50_ratio=R (given over
// embedded); progress goes to stderr.
func (b Subgraphs) Run(ctx context.Context, stdout, stderr io.Writer) error {
	if err := b.Validate(); err != nil {
		return err
	}
	emb := &subgraphSeries{name: "embedded (memkg)", g: b.Embedded}
	giv := &subgraphSeries{name: b.GivenName, g: b.Given}
	var diff subgraphDiff
	for r := 0; r <= b.Rounds; r++ {
		if err := b.round(ctx, r, emb, giv, &diff); err != nil {
			return err
		}
		if r > 0 && r%5 == 0 {
			fmt.Fprintf(stderr, "bench subgraphs: %d/%d rounds\n", r, b.Rounds)
		}
	}
	b.report(stdout, emb, giv, diff)
	if diff.differ > 0 {
		return fmt.Errorf("bench subgraphs: %d of %d subgraphs differ between the backends (first root %s)", diff.differ, diff.compared, diff.first)
	}
	return nil
}

// round r draws its roots and asks both graphs, in alternating order; round
// 0 is the untimed warm-up (plans compiled, caches filled).
func (b Subgraphs) round(ctx context.Context, r int, emb, giv *subgraphSeries, diff *subgraphDiff) error {
	roots := b.roots(r)
	order := []*subgraphSeries{emb, giv}
	if r%2 == 1 {
		order = []*subgraphSeries{giv, emb}
	}
	var got [2]map[string]kg.Subgraph
	for _, s := range order {
		t := time.Now()
		call := s.g.Subgraphs
		if b.Channel {
			call = func(ctx context.Context, roots []string, p kg.SubgraphParams) (map[string]kg.Subgraph, error) {
				return kg.Neighbourhoods(ctx, s.g, roots, p)
			}
		}
		sgs, err := call(ctx, roots, b.Params)
		if err != nil {
			return fmt.Errorf("bench subgraphs: %s, round %d: %w", s.name, r, err)
		}
		d := ms(time.Since(t))
		if s == emb {
			got[0] = sgs
		} else {
			got[1] = sgs
		}
		if r == 0 {
			continue
		}
		s.ms = append(s.ms, d)
		for _, sg := range sgs {
			s.nodes += len(sg.Nodes)
			s.edges += len(sg.Edges)
		}
	}
	for _, q := range roots {
		want, ok1 := got[0][q]
		have, ok2 := got[1][q]
		diff.compared++
		if ok1 != ok2 || !reflect.DeepEqual(want, have) {
			diff.differ++
			if diff.first == "" {
				diff.first = q
			}
		}
	}
	return nil
}

// report writes the table and the comparison.
func (b Subgraphs) report(stdout io.Writer, emb, giv *subgraphSeries, diff subgraphDiff) {
	p := b.Params
	what := "Subgraphs"
	if b.Channel {
		what = "Neighbourhoods (the graph channel's call)"
	}
	fmt.Fprintf(stdout, "%s of %d roots per call (seeded draw, seed %d), %d timed calls per graph after one warm-up; hops %d, max nodes %d, hub degree %d\n\n",
		what, b.Seeds, b.Seed, b.Rounds, p.Hops, p.MaxNodes, p.HubDegree)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "graph\tp50 ms\tp95 ms\tnodes per call\tedges per call")
	for _, s := range []*subgraphSeries{emb, giv} {
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%d\t%d\n", s.name, pct(s.ms, 50), pct(s.ms, 95), s.nodes/b.Rounds, s.edges/b.Rounds)
	}
	tw.Flush()
	if diff.differ > 0 {
		fmt.Fprintf(stdout, "\nDIFFERENT subgraphs: %d of %d roots (first: %s); the backends disagree\n", diff.differ, diff.compared, diff.first)
	} else {
		fmt.Fprintf(stdout, "\nidentical subgraphs: %d of %d roots\n", diff.compared, diff.compared)
	}
	fmt.Fprintf(stdout, "p50_ratio=%.2f\n", pct(giv.ms, 50)/pct(emb.ms, 50))
}

// QIDsBelow keeps the QIDs whose number is below limit (0: all of them):
// gengraph's real entities are the ones below Q1000000000, so the large
// graph's subgraphs can be drawn from them alone, as graphbench does.
func QIDsBelow(qids []string, limit uint64) []string {
	if limit == 0 {
		return qids
	}
	var out []string
	for _, q := range qids {
		if n, err := strconv.ParseUint(strings.TrimPrefix(q, "Q"), 10, 64); err == nil && n < limit {
			out = append(out, q)
		}
	}
	return out
}
