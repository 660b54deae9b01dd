package pathrel

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/dmar-kg/dmar/internal/kg"
)

// walker is one Reach call. Entities and relations are numbered as they are
// met (slots), so that the walk itself reads slices, not string-keyed maps:
// a subgraph's edges are read once into slot pairs, and the best path to
// each entity is held as its edges (steps are built only for the winners,
// and a tie compares the paths' texts piecewise).
type walker struct {
	rel      map[relKey]float64
	prior    map[StepKey]float64
	directed bool

	slot    map[string]int32 // entity -> slot
	ents    []entity         // by slot
	seenVia map[uint64]struct{}
	// by neighbour number, for the walk of one root
	hub, counted []bool
	starts       []int32 // neighbour k's edges are edges[starts[k]:starts[k+1]]
	edges, fill  []int32

	relSlot    map[relPair]int32
	relv       [][2]float64 // by relation slot: relevance forwards, backwards
	subs       []walked
	from, to   []int32 // by edge of every walked subgraph, at its walked.base
	rs         []int32 // the edge's relation slot
	adj        []int32 // the root's edges
	cands      []cand
	bufA, bufB [11]string
	walks      int32
}

// entity is what a walk knows of an entity.
type entity struct {
	qid                        string
	isRoot, mentioned, through bool  // through: a walk went on through it
	best                       int32 // index in cands; -1: none yet
	vias                       int32 // the distinct intermediates of a two-hop path to it
	stamp                      int32 // the walk (one root's) that last found it a neighbour of its root
	near                       int32 // that neighbour's number in the walk
}

// walked is a subgraph read into the walker: its edges are at base in the
// walker's edge slices.
type walked struct {
	edges []kg.Edge
	base  int32
}

type relPair struct{ pid, label string }

// walkers keeps walkers between calls: a request's walk offers thousands of
// candidates, and reusing their room spares the collector that much a
// request.
var walkers sync.Pool

func newWalker(prior map[StepKey]float64, directed bool) *walker {
	w, _ := walkers.Get().(*walker)
	if w == nil {
		w = &walker{rel: map[relKey]float64{}, slot: map[string]int32{}, seenVia: map[uint64]struct{}{}, relSlot: map[relPair]int32{}}
	}
	w.prior, w.directed = prior, directed
	return w
}

// release empties w and returns it to the pool; nothing it held may be
// used after.
func (w *walker) release() {
	clear(w.rel)
	clear(w.slot)
	clear(w.seenVia)
	clear(w.relSlot)
	clear(w.ents) // the strings they hold
	clear(w.subs)
	w.ents, w.relv, w.subs, w.from, w.to, w.rs, w.cands = w.ents[:0], w.relv[:0], w.subs[:0], w.from[:0], w.to[:0], w.rs[:0], w.cands[:0]
	w.prior, w.walks = nil, 0
	w.bufA, w.bufB = [11]string{}, [11]string{}
	walkers.Put(w)
}

// intern is entity's slot, numbering it when new.
func (w *walker) intern(qid string) int32 {
	if s, ok := w.slot[qid]; ok {
		return s
	}
	s := int32(len(w.ents))
	w.slot[qid] = s
	w.ents = append(w.ents, entity{qid: qid, best: -1, near: -1})
	return s
}

// relation is the slot of an edge's relation, with its relevance in both
// directions worked out when new.
func (w *walker) relation(e *kg.Edge) int32 {
	k := relPair{e.PID, e.Label}
	if s, ok := w.relSlot[k]; ok {
		return s
	}
	s := int32(len(w.relv))
	w.relSlot[k] = s
	w.relv = append(w.relv, [2]float64{
		w.rel[relKey{pid: e.PID, label: e.Label}] + w.prior[StepKey{PID: e.PID}],
		w.rel[relKey{pid: e.PID, label: e.Label, backward: w.directed}] + w.prior[StepKey{PID: e.PID, Backward: true}],
	})
	return s
}

// read numbers sg's edges' ends and relations into the walker. Edges come
// sorted by head, then property, so runs share a head and a relation.
func (w *walker) read(sg kg.Subgraph) walked {
	wd := walked{edges: sg.Edges, base: int32(len(w.from))}
	lastFrom, lastPID, lastLabel := "", "", ""
	var from, rel int32 = -1, -1
	for i := range sg.Edges {
		e := &sg.Edges[i]
		if from < 0 || e.From != lastFrom {
			from, lastFrom = w.intern(e.From), e.From
		}
		if rel < 0 || e.PID != lastPID || e.Label != lastLabel {
			rel, lastPID, lastLabel = w.relation(e), e.PID, e.Label
		}
		w.from = append(w.from, from)
		w.to = append(w.to, w.intern(e.To))
		w.rs = append(w.rs, rel)
	}
	return wd
}

// cand is a candidate best path: one or two edges of a walked subgraph,
// each walked forwards or backwards.
type cand struct {
	sub          int32
	e1, e2       int32 // e2 < 0: one step
	back1, back2 bool
	relevant     float64
}

// walk offers every path from root q in sg: one hop, and with hops >= 2
// two, never through a hub or a root, never back to q.
func (w *walker) walk(sg kg.Subgraph, q string, hops int) {
	w.walks++
	id := w.walks
	wd := w.read(sg)
	sub := int32(len(w.subs))
	w.subs = append(w.subs, wd)
	qs := w.intern(q)
	from, to := w.from[wd.base:], w.to[wd.base:]
	w.neighbours(from, to, qs, id, hops >= 2)
	if hops >= 2 {
		for _, n := range sg.Nodes {
			if s, ok := w.slot[n.QID]; n.Hub && ok && w.ents[s].stamp == id {
				w.hub[w.ents[s].near] = true
			}
		}
	}
	for _, i1 := range w.adj {
		back1 := from[i1] != qs
		n := to[i1]
		if back1 {
			n = from[i1]
		}
		r1 := w.relv[w.rs[wd.base+i1]][b2i(back1)]
		w.offer(n, qs, cand{sub: sub, e1: i1, e2: -1, back1: back1, relevant: r1})
		if hops < 2 || w.ents[n].stamp != id || w.hub[w.ents[n].near] || w.ents[n].isRoot {
			continue
		}
		k := w.ents[n].near
		w.ents[n].through = true
		// A root with several edges to n walks through n again, past the
		// same intermediates: they are counted once.
		count := !w.counted[k]
		w.counted[k] = true
		for _, i2 := range w.edges[w.starts[k]:w.starts[k+1]] {
			back2 := from[i2] != n
			t := to[i2]
			if back2 {
				t = from[i2]
			}
			if t == qs {
				continue
			}
			if count && w.firstVia(t, n) {
				w.ents[t].vias++
			}
			r2 := w.relv[w.rs[wd.base+i2]][b2i(back2)]
			w.offer(t, qs, cand{sub: sub, e1: i1, e2: i2, back1: back1, back2: back2, relevant: (r1+r2)/2 - TwoHopPenalty})
		}
	}
}

// firstVia reports whether entity is reached through intermediate for the
// first time in this Reach call, and records it.
func (w *walker) firstVia(entity, intermediate int32) bool {
	v := uint64(entity)<<32 | uint64(intermediate)
	if _, ok := w.seenVia[v]; ok {
		return false
	}
	w.seenVia[v] = struct{}{}
	return true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// zeros is s emptied and grown to n zeros.
func zeros[T any](s []T, n int) []T {
	s = slices.Grow(s[:0], n)[:n]
	clear(s)
	return s
}

// neighbours sets w.adj to the root's edges (loops left out), in edge
// order, and, when second is set, stamps each neighbour with id, numbers
// it (near) and lays out its own edges (loops left out, in edge order) in
// w.edges[w.starts[k]:w.starts[k+1]]. Entities two hops away need no edge
// lists: a walk ends there.
func (w *walker) neighbours(from, to []int32, qs, id int32, second bool) {
	w.adj = w.adj[:0]
	nears := int32(0)
	for i := range from {
		a, b := from[i], to[i]
		switch {
		case a == b:
			continue
		case a == qs:
		case b == qs:
			b = a
		default:
			continue
		}
		w.adj = append(w.adj, int32(i))
		if second && w.ents[b].stamp != id {
			w.ents[b].stamp, w.ents[b].near = id, nears
			nears++
		}
	}
	if !second {
		return
	}
	w.hub, w.counted = zeros(w.hub, int(nears)), zeros(w.counted, int(nears))
	// a counting sort of the neighbours' edges, which keeps edge order
	w.starts = zeros(w.starts, int(nears)+1)
	for i := range from {
		if a, b := from[i], to[i]; a != b {
			if k := w.neighbour(a, id); k >= 0 {
				w.starts[k+1]++
			}
			if k := w.neighbour(b, id); k >= 0 {
				w.starts[k+1]++
			}
		}
	}
	for k := 1; k <= int(nears); k++ {
		w.starts[k] += w.starts[k-1]
	}
	w.edges = zeros(w.edges, int(w.starts[nears]))
	w.fill = append(w.fill[:0], w.starts[:nears]...)
	for i := range from {
		if a, b := from[i], to[i]; a != b {
			if k := w.neighbour(a, id); k >= 0 {
				w.edges[w.fill[k]] = int32(i)
				w.fill[k]++
			}
			if k := w.neighbour(b, id); k >= 0 {
				w.edges[w.fill[k]] = int32(i)
				w.fill[k]++
			}
		}
	}
}

// neighbour is entity s's number as a neighbour of walk id's root; -1: not
// one.
func (w *walker) neighbour(s, id int32) int32 {
	if e := &w.ents[s]; e.stamp == id {
		return e.near
	}
	return -1
}

// offer keeps c as entity's best path when it beats the one held.
func (w *walker) offer(entity, root int32, c cand) {
	if w.ents[entity].mentioned || entity == root {
		return
	}
	i := w.ents[entity].best
	if i < 0 {
		w.ents[entity].best = int32(len(w.cands))
		w.cands = append(w.cands, c)
		return
	}
	if b := &w.cands[i]; c.relevant > b.relevant || (c.relevant == b.relevant && w.before(&c, b)) {
		*b = c
	}
}

// steps are c's steps: the second is set when two is.
func (w *walker) steps(c *cand) (s1, s2 Step, two bool) {
	wd := w.subs[c.sub]
	s1 = w.step(wd, c.e1, c.back1)
	if c.e2 < 0 {
		return s1, Step{}, false
	}
	return s1, w.step(wd, c.e2, c.back2), true
}

// step is edge i of wd walked forwards or backwards, with its relevance.
func (w *walker) step(wd walked, i int32, back bool) Step {
	e := &wd.edges[i]
	st := Step{From: e.From, PID: e.PID, Label: e.Label, To: e.To, Backward: back}
	if back {
		st.From, st.To = e.To, e.From
	}
	st.Relevance = w.relv[w.rs[wd.base+i]][b2i(back)]
	return st
}

// target is the slot of the entity c reaches.
func (w *walker) target(c *cand) int32 {
	base, e, back := w.subs[c.sub].base, c.e1, c.back1
	if c.e2 >= 0 {
		e, back = c.e2, c.back2
	}
	if back {
		return w.from[base+e]
	}
	return w.to[base+e]
}

// before orders two equally relevant paths by their texts.
func (w *walker) before(a, b *cand) bool {
	return comparePieces(w.parts(a, &w.bufA), w.parts(b, &w.bufB)) < 0
}

// parts are the pieces of the path's String, in order.
func (w *walker) parts(c *cand, buf *[11]string) []string {
	s1, s2, two := w.steps(c)
	out := appendStep(append(buf[:0], s1.From), s1)
	if two {
		out = appendStep(out, s2)
	}
	return out
}

// paths are the best paths, with the intermediates' bonus, best first.
// The candidates are sorted by a compact key and the paths built in that
// order; their steps are cut from one slice (each capped so that nothing
// appends into another's).
func (w *walker) paths() []Path {
	type ranked struct {
		relevance float64
		ent, cand int32
	}
	order := make([]ranked, len(w.cands))
	for i := range w.cands {
		c := &w.cands[i]
		r := ranked{relevance: c.relevant, ent: w.target(c), cand: int32(i)}
		if n := w.ents[r.ent].vias; c.e2 >= 0 && n > 1 {
			r.relevance += ViaBonus * math.Log(float64(n))
		}
		order[i] = r
	}
	// Entities are distinct, so the order is total.
	slices.SortFunc(order, func(a, b ranked) int {
		if a.relevance != b.relevance {
			return cmp.Compare(b.relevance, a.relevance)
		}
		return strings.Compare(w.ents[a.ent].qid, w.ents[b.ent].qid)
	})
	out := make([]Path, len(order))
	steps := make([]Step, 0, 2*len(order))
	for i, r := range order {
		s1, s2, two := w.steps(&w.cands[r.cand])
		lo := len(steps)
		steps = append(steps, s1)
		if two {
			steps = append(steps, s2)
		}
		out[i] = Path{Entity: w.ents[r.ent].qid, Steps: steps[lo:len(steps):len(steps)], Relevance: r.relevance}
	}
	return out
}
