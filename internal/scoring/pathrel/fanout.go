package pathrel

import (
	"math"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Fanout counts how many entities each relation reaches from a node in each
// direction, in the subgraphs the channel walked. A relation that reaches
// hundreds of objects from a node ("genre of" from "rock music") names each
// of them less specifically than one that reaches one ("continent" from
// "Israel"); the graph channel's fan-out normaliser (graph_fanout) uses the
// counts to keep such a relation from filling the top of the ranking.
// It counts a subgraph in one pass over its edges, on first use; not safe
// for concurrent use.
type Fanout struct {
	subs   map[string]kg.Subgraph
	counts map[string]map[nodeStep]int // by subgraph root
}

// nodeStep is a relation walked in a direction from a node.
type nodeStep struct {
	node string
	StepKey
}

// NewFanout counts over subs (by root QID).
func NewFanout(subs map[string]kg.Subgraph) *Fanout {
	return &Fanout{subs: subs, counts: map[string]map[nodeStep]int{}}
}

// Step is the number of distinct entities step s of a path walked in the
// subgraph of root reaches from s.From by its relation in its direction: at
// least 1, or 0 when root's subgraph was not walked.
func (f *Fanout) Step(root string, s Step) int {
	c, ok := f.counts[root]
	if !ok {
		sg, walked := f.subs[root]
		if !walked {
			return 0
		}
		c = countFanout(sg.Edges)
		f.counts[root] = c
	}
	return max(c[nodeStep{s.From, StepKey{PID: s.PID, Backward: s.Backward}}], 1)
}

// LogMean is the mean over p's steps of ln(fan-out): a one-hop path's
// ln(n), a two-hop path's the mean of its two steps' (as its relevance is
// the mean of theirs). 0 for a path without steps.
func (f *Fanout) LogMean(p Path) float64 {
	if len(p.Steps) == 0 {
		return 0
	}
	root, sum := p.Root(), 0.0
	for _, s := range p.Steps {
		if n := f.Step(root, s); n > 1 {
			sum += math.Log(float64(n))
		}
	}
	return sum / float64(len(p.Steps))
}

// countFanout counts, for every node of edges, its distinct neighbours per
// (relation, direction); a repeated edge counts once and loops are left out,
// as Reach leaves them out.
func countFanout(edges []kg.Edge) map[nodeStep]int {
	type triple struct{ from, pid, to string }
	seen := make(map[triple]bool, len(edges))
	out := make(map[nodeStep]int)
	for _, e := range edges {
		t := triple{e.From, e.PID, e.To}
		if e.From == e.To || seen[t] {
			continue
		}
		seen[t] = true
		out[nodeStep{e.From, StepKey{PID: e.PID}}]++
		out[nodeStep{e.To, StepKey{PID: e.PID, Backward: true}}]++
	}
	return out
}
