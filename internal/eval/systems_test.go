package eval

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

func TestGraphSystems(t *testing.T) {
	ss, err := Systems([]string{"dmar", "dmar-paper", "kg-walk", "dmar-graph", "dmar-graph-h2-b3-dir-k20-w0.5"}, pipeline.Defaults(), 20, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]System{}
	for _, s := range ss {
		by[s.Name] = s
	}
	if !reflect.DeepEqual(by["dmar"].Options, by["dmar-paper"].Options) || by["dmar-paper"].Kind != "dmar" {
		t.Error("dmar-paper is not today's dmar")
	}
	if by["dmar"].Options.GraphRecall != 0 {
		t.Error("dmar has the graph channel on")
	}
	if s := by["kg-walk"]; s.Kind != "kg-walk" || !s.Baseline() || s.Options.GraphRecall != graphHops {
		t.Errorf("kg-walk: %+v", s)
	}
	if s := by["dmar-graph"]; s.Kind != "dmar" || s.Options.GraphRecall != graphHops || s.Options.GraphBoost != graphBoost {
		t.Errorf("dmar-graph: %+v", s)
	}
	o := by["dmar-graph-h2-b3-dir-k20-w0.5"].Options
	if o.GraphRecall != 2 || o.GraphBoost != 3 || o.GraphRelations != "directed" || o.GraphRecallK != 20 || o.GraphWeight != 0.5 {
		t.Errorf("variant options %+v", o)
	}
	for _, bad := range []string{"dmar-graph-x", "kg-walk-h", "dmar-graph-h3"} {
		if _, err := Systems([]string{bad}, pipeline.Defaults(), 20, 0.5); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
