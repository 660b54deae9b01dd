package kg_test

import (
	"context"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
)

type slowGraph struct{}

func (slowGraph) Entities(ctx context.Context, _ []string) (map[string]kg.Entity, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (slowGraph) Link(context.Context, string) ([]kg.Mention, error) { return nil, nil }
func (slowGraph) Subgraphs(context.Context, []string, kg.SubgraphParams) (map[string]kg.Subgraph, error) {
	return nil, nil
}

type fullGraph struct{ slowGraph }

func (fullGraph) SubgraphStatement([]string, kg.SubgraphParams) (string, map[string]any) {
	return "MATCH", nil
}
func (fullGraph) PathStatement([]kg.Path) (string, map[string]any) { return "UNWIND", nil }
func (fullGraph) RecordRetrieval(ctx context.Context, _ kg.RetrievalRecord) error {
	<-ctx.Done()
	return ctx.Err()
}
func (fullGraph) Ping(context.Context) error { return nil }

type countErrs map[string]int

func (c countErrs) BackendError(backend, op string) { c[backend+"/"+op]++ }

// The timed graph is an Inspector, a Recorder and a Pinger exactly when the
// graph it wraps is one, and every call has its limit.
func TestWithTimeoutKeepsOptionalPorts(t *testing.T) {
	m := countErrs{}
	plain := kg.WithTimeout(slowGraph{}, "neo4j", 10*time.Millisecond, m)
	if _, ok := plain.(kg.Inspector); ok {
		t.Error("a plain graph became an Inspector")
	}
	if _, ok := plain.(kg.Recorder); ok {
		t.Error("a plain graph became a Recorder")
	}
	if _, ok := plain.(kg.Pinger); ok {
		t.Error("a plain graph became a Pinger")
	}
	if _, err := plain.Entities(context.Background(), nil); errs.CodeOf(err) != errs.Unavailable {
		t.Errorf("a slow call: %v, want unavailable", err)
	}
	full := kg.WithTimeout(fullGraph{}, "neo4j", 10*time.Millisecond, m)
	insp, ok1 := full.(kg.Inspector)
	rec, ok2 := full.(kg.Recorder)
	p, ok3 := full.(kg.Pinger)
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("Inspector %v, Recorder %v, Pinger %v; want all", ok1, ok2, ok3)
	}
	if st, _ := insp.SubgraphStatement(nil, kg.SubgraphParams{}); st != "MATCH" {
		t.Errorf("SubgraphStatement = %q", st)
	}
	if st, _ := insp.PathStatement(nil); st != "UNWIND" {
		t.Errorf("PathStatement = %q", st)
	}
	if err := p.Ping(context.Background()); err != nil {
		t.Error(err)
	}
	if err := rec.RecordRetrieval(context.Background(), kg.RetrievalRecord{}); errs.CodeOf(err) != errs.Unavailable {
		t.Errorf("a slow record: %v, want unavailable", err)
	}
	if m["neo4j/entities"] != 1 || m["neo4j/record"] != 1 {
		t.Errorf("counted %v", m)
	}
}

type linkingGraph struct{ fullGraph }

func (linkingGraph) LinkCandidates(ctx context.Context, _ string) ([]kg.Token, []kg.SpanCandidates, error) {
	<-ctx.Done()
	return nil, nil, ctx.Err()
}

// A graph with every optional port (neo4jkg) keeps the context linker's
// port, under the limit; one without it does not gain it.
func TestWithTimeoutKeepsCandidateLinker(t *testing.T) {
	m := countErrs{}
	if _, ok := kg.WithTimeout(fullGraph{}, "neo4j", time.Millisecond, m).(kg.CandidateLinker); ok {
		t.Error("a graph without LinkCandidates became a CandidateLinker")
	}
	g := kg.WithTimeout(linkingGraph{}, "neo4j", 10*time.Millisecond, m)
	cl, ok := g.(kg.CandidateLinker)
	if !ok {
		t.Fatal("the timed graph lost the CandidateLinker port")
	}
	for _, port := range []bool{is[kg.Inspector](g), is[kg.Recorder](g), is[kg.Pinger](g)} {
		if !port {
			t.Fatal("the timed linking graph lost an optional port")
		}
	}
	if _, _, err := cl.LinkCandidates(context.Background(), "x"); errs.CodeOf(err) != errs.Unavailable {
		t.Errorf("a slow LinkCandidates: %v, want unavailable", err)
	}
	if m["neo4j/link candidates"] != 1 {
		t.Errorf("counted %v", m)
	}
}

func is[T any](g kg.Graph) bool {
	_, ok := g.(T)
	return ok
}

type channelGraph struct{ linkingGraph }

func (channelGraph) Neighbourhoods(ctx context.Context, _ []string, _ kg.SubgraphParams) (map[string]kg.Subgraph, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// The graph channel's one round trip survives the limit on a graph with
// every optional port (neo4jkg), under the limit; kg.Neighbourhoods then
// calls it, not Subgraphs.
func TestWithTimeoutKeepsNeighbourhoodReader(t *testing.T) {
	m := countErrs{}
	if is[kg.NeighbourhoodReader](kg.WithTimeout(linkingGraph{}, "neo4j", time.Millisecond, m)) {
		t.Error("a graph without Neighbourhoods became a NeighbourhoodReader")
	}
	g := kg.WithTimeout(channelGraph{}, "neo4j", 10*time.Millisecond, m)
	for _, port := range []bool{is[kg.NeighbourhoodReader](g), is[kg.CandidateLinker](g), is[kg.Inspector](g), is[kg.Recorder](g), is[kg.Pinger](g)} {
		if !port {
			t.Fatal("the timed graph lost an optional port")
		}
	}
	if _, err := kg.Neighbourhoods(context.Background(), g, []string{"Q1"}, kg.DefaultSubgraphParams()); errs.CodeOf(err) != errs.Unavailable {
		t.Errorf("a slow Neighbourhoods: %v, want unavailable", err)
	}
	if m["neo4j/neighbourhoods"] != 1 || m["neo4j/subgraphs"] != 0 {
		t.Errorf("counted %v", m)
	}
}

type degreeGraph struct{ channelGraph }

func (degreeGraph) NeighbourhoodDegrees(ctx context.Context, _ []string, _ kg.SubgraphParams) (map[string]kg.Subgraph, map[string]int, error) {
	<-ctx.Done()
	return nil, nil, ctx.Err()
}

// The neighbourhoods with their degrees survive the limit too, on a graph
// with every optional port (neo4jkg); NeighbourhoodsWithDegrees then calls
// them, not Neighbourhoods.
func TestWithTimeoutKeepsNeighbourhoodDegreeReader(t *testing.T) {
	m := countErrs{}
	if is[kg.NeighbourhoodDegreeReader](kg.WithTimeout(channelGraph{}, "neo4j", time.Millisecond, m)) {
		t.Error("a graph without NeighbourhoodDegrees became a NeighbourhoodDegreeReader")
	}
	g := kg.WithTimeout(degreeGraph{}, "neo4j", 10*time.Millisecond, m)
	for _, port := range []bool{is[kg.NeighbourhoodDegreeReader](g), is[kg.NeighbourhoodReader](g), is[kg.CandidateLinker](g), is[kg.Inspector](g), is[kg.Recorder](g), is[kg.Pinger](g)} {
		if !port {
			t.Fatal("the timed graph lost an optional port")
		}
	}
	if _, _, err := kg.NeighbourhoodsWithDegrees(context.Background(), g, []string{"Q1"}, kg.DefaultSubgraphParams()); errs.CodeOf(err) != errs.Unavailable {
		t.Errorf("a slow NeighbourhoodDegrees: %v, want unavailable", err)
	}
	if m["neo4j/neighbourhoods"] != 1 || m["neo4j/subgraphs"] != 0 {
		t.Errorf("counted %v", m)
	}
}
