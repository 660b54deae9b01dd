package answer

import (
	"slices"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

func graphResult(rel float64, bridge bool, to string) *pipeline.Result {
	step := pathrel.Step{From: "Q23301", PID: "P172", Label: "ethnic group", To: to, Relevance: rel}
	g := &pipeline.GraphPath{Path: "Q23301 -[ethnic group]-> " + to, Steps: []pathrel.Step{step}, Relevance: rel}
	if bridge {
		g.Bridge = &pipeline.Bridge{}
	}
	return &pipeline.Result{
		QueryEntities: []pipeline.QueryEntity{{QID: "Q23301", Label: "Roberto Benigni", Confidence: 0.9}},
		Results: []pipeline.Doc{
			{ID: "Q50001", Title: "Italian people", Text: "Italians are a Romance ethnic group.",
				Breakdown: pipeline.Breakdown{Source: "kg", Graph: g, Paths: []pipeline.NamedPath{{From: "Q23301", To: "Q50001", ToLabel: "Italian people",
					Text: "Roberto Benigni -[ethnic group]-> Italian people", Steps: []pathrel.Step{step}}}}},
			{ID: "Q19356", Title: "Pinocchio", Text: "A film.", Breakdown: pipeline.Breakdown{Source: "kg"}},
			{ID: "Q1", Title: "Other", Text: "Other."},
		},
	}
}

func TestGraphOf(t *testing.T) {
	g := GraphOf(graphResult(0.52, false, "Q50001"), DefaultGraphTrust)
	if g == nil || !g.Trusted || g.Label != "Italian people" || g.Doc != "Q50001" || g.Path != "Roberto Benigni -[ethnic group]-> Italian people" ||
		g.Confidence != 0.9 || g.Agree != 0.5 {
		t.Fatalf("trusted path: %+v", g)
	}
	if g := GraphOf(graphResult(0.2, false, "Q50001"), DefaultGraphTrust); g == nil || g.Trusted {
		t.Errorf("a path below the relevance is a candidate, not trusted: %+v", g)
	}
	// A page reached through what it mentions, or a path that does not end
	// at the top result's own entity, is no answer.
	if g := GraphOf(graphResult(0.9, true, "Q50001"), DefaultGraphTrust); g != nil {
		t.Errorf("bridge: %+v", g)
	}
	if g := GraphOf(graphResult(0.9, false, "Q38"), DefaultGraphTrust); g != nil {
		t.Errorf("another entity's page: %+v", g)
	}
	if g := GraphOf(&pipeline.Result{}, DefaultGraphTrust); g != nil {
		t.Errorf("no results: %+v", g)
	}
	// Facts along each result's best path, in the graph's direction.
	src := SourcesOf(graphResult(0.52, false, "Q50001"))
	if len(src) != 3 || !slices.Equal(src[0].Facts, []string{"Roberto Benigni - ethnic group - Italian people"}) || src[1].Facts != nil {
		t.Errorf("sources %+v", src)
	}
}
