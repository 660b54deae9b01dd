package kg

import (
	"context"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
)

// WithTimeout is g with a time limit of d on every call, each failed call
// counted on m (optional) under backend. A call past its limit while the
// request still has time is an outage of the backend (errs.Unavailable).
// The result is an Inspector, a Recorder and a Pinger exactly when g is; a
// CandidateLinker too when g is all four, a NeighbourhoodReader when g is
// all five, and a NeighbourhoodDegreeReader when g is all six (neo4jkg), so
// that the context linker and the graph channel's one round trip keep
// working behind the limit.
func WithTimeout(g Graph, backend string, d time.Duration, m errs.BackendErrors) Graph {
	t := timedGraph{g: g, backend: backend, d: d, m: m}
	insp, isInsp := g.(Inspector)
	_, isRec := g.(Recorder)
	p, isPing := g.(Pinger)
	if !isPing {
		p = nil
	}
	cl, isCL := g.(CandidateLinker)
	nr, isNR := g.(NeighbourhoodReader)
	dr, isDR := g.(NeighbourhoodDegreeReader)
	switch {
	case isInsp && isRec && isPing && isCL && isNR && isDR:
		return struct {
			timedRecorder
			timedLinker
			timedNeighbourhoods
			timedNeighbourhoodDegrees
			Inspector
			Pinger
		}{timedRecorder{t}, timedLinker{t, cl}, timedNeighbourhoods{t, nr}, timedNeighbourhoodDegrees{t, dr}, insp, p}
	case isInsp && isRec && isPing && isCL && isNR:
		return struct {
			timedRecorder
			timedLinker
			timedNeighbourhoods
			Inspector
			Pinger
		}{timedRecorder{t}, timedLinker{t, cl}, timedNeighbourhoods{t, nr}, insp, p}
	case isInsp && isRec && isPing && isCL:
		return struct {
			timedRecorder
			timedLinker
			Inspector
			Pinger
		}{timedRecorder{t}, timedLinker{t, cl}, insp, p}
	case isInsp && isRec && isPing:
		return struct {
			timedRecorder
			Inspector
			Pinger
		}{timedRecorder{t}, insp, p}
	case isInsp && isRec:
		return struct {
			timedRecorder
			Inspector
		}{timedRecorder{t}, insp}
	case isInsp && isPing:
		return struct {
			timedGraph
			Inspector
			Pinger
		}{t, insp, p}
	case isRec && isPing:
		return struct {
			timedRecorder
			Pinger
		}{timedRecorder{t}, p}
	case isInsp:
		return struct {
			timedGraph
			Inspector
		}{t, insp}
	case isRec:
		return timedRecorder{t}
	case isPing:
		return struct {
			timedGraph
			Pinger
		}{t, p}
	}
	return t
}

type timedGraph struct {
	g       Graph
	backend string
	d       time.Duration
	m       errs.BackendErrors
}

func (t timedGraph) call(ctx context.Context, op string, f func(context.Context) error) error {
	return errs.Bounded(ctx, t.d, t.backend, op, t.m, f)
}

func (t timedGraph) Entities(ctx context.Context, qids []string) (out map[string]Entity, err error) {
	err = t.call(ctx, "entities", func(ctx context.Context) error { out, err = t.g.Entities(ctx, qids); return err })
	return out, err
}

func (t timedGraph) Link(ctx context.Context, text string) (out []Mention, err error) {
	err = t.call(ctx, "link", func(ctx context.Context) error { out, err = t.g.Link(ctx, text); return err })
	return out, err
}

func (t timedGraph) Subgraphs(ctx context.Context, roots []string, p SubgraphParams) (out map[string]Subgraph, err error) {
	err = t.call(ctx, "subgraphs", func(ctx context.Context) error { out, err = t.g.Subgraphs(ctx, roots, p); return err })
	return out, err
}

type timedRecorder struct{ timedGraph }

func (t timedRecorder) RecordRetrieval(ctx context.Context, r RetrievalRecord) error {
	return t.call(ctx, "record", func(ctx context.Context) error { return t.g.(Recorder).RecordRetrieval(ctx, r) })
}

type timedLinker struct {
	t  timedGraph
	cl CandidateLinker
}

func (l timedLinker) LinkCandidates(ctx context.Context, text string) (toks []Token, spans []SpanCandidates, err error) {
	err = l.t.call(ctx, "link candidates", func(ctx context.Context) error {
		toks, spans, err = l.cl.LinkCandidates(ctx, text)
		return err
	})
	return toks, spans, err
}

type timedNeighbourhoods struct {
	t  timedGraph
	nr NeighbourhoodReader
}

func (n timedNeighbourhoods) Neighbourhoods(ctx context.Context, roots []string, p SubgraphParams) (out map[string]Subgraph, err error) {
	err = n.t.call(ctx, "neighbourhoods", func(ctx context.Context) error { out, err = n.nr.Neighbourhoods(ctx, roots, p); return err })
	return out, err
}

type timedNeighbourhoodDegrees struct {
	t  timedGraph
	dr NeighbourhoodDegreeReader
}

func (n timedNeighbourhoodDegrees) NeighbourhoodDegrees(ctx context.Context, roots []string, p SubgraphParams) (out map[string]Subgraph, deg map[string]int, err error) {
	err = n.t.call(ctx, "neighbourhoods", func(ctx context.Context) error { out, deg, err = n.dr.NeighbourhoodDegrees(ctx, roots, p); return err })
	return out, deg, err
}
