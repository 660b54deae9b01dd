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
// It counts each node of a subgraph once, on first use; not safe for
// concurrent use.
type Fanout struct {
	subs   map[string]kg.Subgraph
	counts map[[2]string]map[StepKey]int // by (subgraph root, node)
}

// NewFanout counts over subs (by root QID).
func NewFanout(subs map[string]kg.Subgraph) *Fanout {
	return &Fanout{subs: subs, counts: map[[2]string]map[StepKey]int{}}
}

// Step is the number of distinct entities step s of a path walked in the
// subgraph of root reaches from s.From by its relation in its direction: at
// least 1, or 0 when root's subgraph was not walked.
func (f *Fanout) Step(root string, s Step) int {
	k := [2]string{root, s.From}
	c, ok := f.counts[k]
	if !ok {
		sg, walked := f.subs[root]
		if !walked {
			return 0
		}
		c = nodeFanout(s.From, sg.Edges)
		f.counts[k] = c
	}
	return max(c[StepKey{PID: s.PID, Backward: s.Backward}], 1)
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

// nodeFanout counts the distinct neighbours of node per (relation,
// direction) over edges; loops are left out, as Reach leaves them out.
func nodeFanout(node string, edges []kg.Edge) map[StepKey]int {
	type seenKey struct {
		k  StepKey
		to string
	}
	seen := map[seenKey]bool{}
	out := map[StepKey]int{}
	for _, e := range edges {
		if e.From == e.To {
			continue
		}
		var sk seenKey
		switch node {
		case e.From:
			sk = seenKey{StepKey{PID: e.PID}, e.To}
		case e.To:
			sk = seenKey{StepKey{PID: e.PID, Backward: true}, e.From}
		default:
			continue
		}
		if !seen[sk] {
			seen[sk] = true
			out[sk.k]++
		}
	}
	return out
}
