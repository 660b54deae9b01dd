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
// roots' neighbourhoods and walks them on the core stage 1 leaves idle; Run
// takes the walk's paths when stage 1 adds no root, and otherwise extends
// the open walk with the added roots (pathrel.Walk.Extend). Either way Run
// returns what it returns without it, with the same backend calls: the
// documents are read only once the roots are known.

// Ahead is the linked roots' neighbourhoods and walk, read while stage 1
// searches.
type Ahead struct {
	qids   []string
	walked chan struct{}  // closed once the fields below are set
	nb     Neighbourhoods // nil Subs: not read (the run reads them again)
	walk   *pathrel.Walk  // open, until Run takes it; nil: not walked
	paths  []pathrel.Path // the walk's
	relq   []float32
}

// RunAhead starts reading and walking the neighbourhoods of the entities
// Q's mentions link to; nil when the channel is off, nothing is linked, or
// a relation prior is on (whose unavailability the request's trace says
// once: the reach stage reads it).
func (c Channel) RunAhead(ctx context.Context, q chanio.Query) *Ahead {
	qids := kg.QIDs(q.Mentions)
	if c.Recall == 0 || len(qids) == 0 || c.PriorWeight != 0 {
		return nil
	}
	a := &Ahead{qids: qids, walked: make(chan struct{})}
	go a.run(ctx, c, q)
	return a
}

// run is the neighbourhoods and reach stages for the linked roots, the walk
// left open. A failure leaves the field it would set empty: the request's
// run meets it again and reports it.
func (a *Ahead) run(ctx context.Context, c Channel, q chanio.Query) {
	defer close(a.walked)
	c.Ahead = nil
	nb, err := c.neighbourhoods(ctx, Roots(a.qids, nil, 0), nil)
	if err != nil {
		return
	}
	a.nb = nb
	if a.walk, a.relq, err = c.startWalk(ctx, q, nb, nopTrace{}); err == nil {
		a.paths = a.walk.Paths()
	}
}

// nopTrace is the run ahead's: without a relation prior the walk records
// nothing.
type nopTrace struct{}

func (nopTrace) Fallback(string, string)   {}
func (nopTrace) Add(string, time.Duration) {}
func (nopTrace) HasFallback(string) bool   { return false }

// of is a when it was started for the entities of the same mentions ms,
// else nil.
func (a *Ahead) of(ms []kg.Mention) *Ahead {
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
	if a.nb.Subs == nil {
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
