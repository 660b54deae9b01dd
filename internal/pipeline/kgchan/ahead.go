package kgchan

import (
	"context"
	"slices"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// The channel's walk, run ahead. Its roots are Q's linked entities and the
// entities of the top stage-1 documents; on most questions the top
// documents are the linked entities' own pages (173 of kgqa dev's 207), so
// the roots are known before stage 1 searches. RunAhead reads the linked
// roots' neighbourhoods and walks them on a core the request leaves idle
// (the pipeline starts it once the early link's masked question is
// encoded, while enc(Q) still runs, Run using it when linking kept those
// entities and that relation query: Of, usable); Run
// takes the walk's paths when stage 1 adds no root, and otherwise extends
// the open walk with the added roots (pathrel.Walk.Extend). Either way Run
// returns what it returns without it, with the same backend calls: the
// documents are read only once the roots are known. Over in-process
// backends (Channel.Speculate) the run ahead goes on to the documents, and
// Run takes its whole output when stage 1 adds no root; when it adds one,
// that part of the run ahead is cancelled and wasted, which costs CPU
// only, not a round trip.

// Ahead is the linked roots' neighbourhoods and walk, read before stage 1
// ends.
type Ahead struct {
	qids   []string
	walked chan struct{}  // closed once the fields below are set
	nb     Neighbourhoods // zero: not read (the run reads them again)
	read   bool           // nb was read
	walk   *pathrel.Walk  // open, until Run takes it; nil: not walked
	paths  []pathrel.Path // the walk's
	relq   []float32
	cancel context.CancelFunc // ends the run
	// With Speculate: enc(Q), set once vecSet is closed (RunAhead may be
	// called before Q is encoded), and the channel's output for the linked
	// roots alone, set once done is closed, with its trace.
	speculate bool
	vec       []float32
	vecSet    chan struct{}
	done      chan struct{}
	out       Output
	err       error
	rec       recorder
}

// RunAhead starts reading and walking the neighbourhoods of the entities
// Q's mentions link to; nil when the channel is off, nothing is linked, or
// a relation prior is on (whose unavailability the request's trace says
// once: the reach stage reads it). q.Vector may be nil yet: SetVector
// gives it.
func (c Channel) RunAhead(ctx context.Context, q chanio.Query) *Ahead {
	qids := kg.QIDs(q.Mentions)
	if c.Recall == 0 || len(qids) == 0 || c.PriorWeight != 0 {
		return nil
	}
	a := &Ahead{qids: qids, walked: make(chan struct{}), speculate: c.Speculate, vecSet: make(chan struct{})}
	ctx, a.cancel = context.WithCancel(ctx)
	if a.speculate {
		a.done = make(chan struct{})
	}
	if q.Vector != nil {
		a.SetVector(q.Vector)
	}
	go a.run(ctx, c, q)
	return a
}

// SetVector gives the run enc(Q), once; a nil a does nothing.
func (a *Ahead) SetVector(v []float32) {
	if a == nil || a.vec != nil {
		return
	}
	a.vec = v
	close(a.vecSet)
}

// Cancel ends a run that will not be used; a nil a does nothing.
func (a *Ahead) Cancel() {
	if a != nil {
		a.cancel()
	}
}

// run is the neighbourhoods and reach stages for the linked roots, the walk
// left open, and with speculate the stages after, once enc(Q) is known.
// Without speculate a failure leaves the field it would set empty: the
// request's run meets it again and reports it.
func (a *Ahead) run(ctx context.Context, c Channel, q chanio.Query) {
	c.Ahead = nil
	t := time.Now()
	nb, nbErr := c.neighbourhoods(ctx, Roots(a.qids, nil, 0), nil)
	var err error
	if nbErr == nil {
		if a.speculate { // the trace is replayed only from a speculative run
			a.rec.Add("graph_neighbourhoods", time.Since(t))
		}
		a.nb, a.read = nb, true
		if a.walk, a.relq, err = c.startWalk(ctx, q, nb, nopTrace{}); err == nil {
			a.paths = a.walk.Paths()
		}
	}
	close(a.walked)
	if !a.speculate {
		return
	}
	defer close(a.done)
	switch {
	case nbErr != nil:
		a.out, a.err = failed(ctx, &a.rec, "graph_unavailable", "the graph channel's subgraph extraction", nbErr)
	case err != nil && ctx.Err() != nil:
		a.err = ctx.Err()
	case err != nil:
		a.err = err
	default:
		select {
		case <-a.vecSet:
		case <-ctx.Done():
			a.err = ctx.Err()
			return
		}
		q.Vector = a.vec
		a.out, a.err = c.fromWalk(ctx, q, Walk{Neighbourhoods: nb, Reached: a.paths, relq: a.relq}, &a.rec)
	}
}

// usable is a when its walk read the relation query the request's reads
// (the early link's mentions can be masked otherwise than the linked
// ones), else nil, the run cancelled.
func (a *Ahead) usable(ctx context.Context, c Channel, q chanio.Query) *Ahead {
	if a == nil || !a.wait(ctx) {
		return nil
	}
	if relq, err := c.relationQueryOf(ctx, q.Text, c.RelationAhead, q.RelVector, q.Mentions); err != nil || !sameVector(relq, a.relq) {
		a.cancel()
		return nil
	}
	return a
}

// sameVector reports whether a and b are one vector, not merely equal.
func sameVector(a, b []float32) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

// result is the speculative run's output, its trace replayed into tr, when
// roots are the linked ones alone; ok is false, and that run cancelled,
// otherwise or without one.
func (a *Ahead) result(ctx context.Context, roots []pathrel.Root, tr chanio.Trace) (out Output, ok bool, err error) {
	if a == nil || !a.speculate {
		return Output{}, false, nil
	}
	defer a.cancel()
	if len(roots) != len(a.qids) {
		return Output{}, false, nil
	}
	select {
	case <-a.done:
	case <-ctx.Done():
		return Output{}, true, ctx.Err()
	}
	if a.walk != nil {
		a.walk.Release()
		a.walk = nil
	}
	a.rec.replay(tr)
	return a.out, true, a.err
}

// nopTrace is the run ahead's: without a relation prior the walk records
// nothing.
type nopTrace struct{}

func (nopTrace) Fallback(string, string)   {}
func (nopTrace) Add(string, time.Duration) {}
func (nopTrace) HasFallback(string) bool   { return false }

// Of is a when it was started for the entities of the same mentions ms,
// else nil.
func (a *Ahead) Of(ms []kg.Mention) *Ahead {
	if a == nil || !slices.Equal(a.qids, kg.QIDs(ms)) {
		return nil
	}
	return a
}

// wait waits for the run; false when ctx ended first.
func (a *Ahead) wait(ctx context.Context) bool {
	select {
	case <-a.walked:
		return true
	case <-ctx.Done():
		return false
	}
}

// neighbourhoods are the linked roots' neighbourhoods once read, and the
// roots they cover; none when a is nil or failed to read them.
func (a *Ahead) neighbourhoods(ctx context.Context) (Neighbourhoods, map[string]bool, error) {
	if a == nil {
		return Neighbourhoods{}, nil, nil
	}
	if !a.wait(ctx) {
		return Neighbourhoods{}, nil, ctx.Err()
	}
	if !a.read {
		return Neighbourhoods{}, nil, nil
	}
	return a.nb, set(a.qids), nil
}

// reached are the best paths from nb's roots and the relation query they
// read: the walk's paths when nb's roots are the linked ones alone, else
// the walk extended with the others; ok is false, and the caller walks,
// when a is nil, did not walk, or its walk went through an added root.
func (a *Ahead) reached(ctx context.Context, nb Neighbourhoods) (paths []pathrel.Path, relq []float32, ok bool, err error) {
	if a == nil || len(nb.Roots) < len(a.qids) {
		return nil, nil, false, nil
	}
	if !a.wait(ctx) {
		return nil, nil, false, ctx.Err()
	}
	defer a.cancel()
	wk := a.walk
	if wk == nil {
		return nil, nil, false, nil
	}
	a.walk = nil
	defer wk.Release()
	if len(nb.Roots) == len(a.qids) {
		return a.paths, a.relq, true, nil
	}
	if ok, err := wk.Extend(ctx, nb.Roots[len(a.qids):], nb.Subs); err != nil || !ok {
		return nil, nil, false, err
	}
	return wk.Paths(), a.relq, true, nil
}

// recorder is a chanio.Trace kept to be replayed.
type recorder struct{ events []traceEvent }

type traceEvent struct {
	fallback     bool
	name, reason string
	d            time.Duration
}

func (r *recorder) Fallback(name, reason string) {
	r.events = append(r.events, traceEvent{fallback: true, name: name, reason: reason})
}

func (r *recorder) HasFallback(name string) bool {
	for _, e := range r.events {
		if e.fallback && e.name == name {
			return true
		}
	}
	return false
}

func (r *recorder) Add(name string, d time.Duration) {
	r.events = append(r.events, traceEvent{name: name, d: d})
}

// replay records r's events in tr, in order.
func (r *recorder) replay(tr chanio.Trace) {
	for _, e := range r.events {
		if e.fallback {
			tr.Fallback(e.name, e.reason)
		} else {
			tr.Add(e.name, e.d)
		}
	}
}
