package pathrel

import (
	"math"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
)

// R -[P161]-> X1, X2, X3 (one of them twice: a duplicate edge counts once);
// R -[P30]-> Y; Z -[P57]-> R; X1 -[P27]-> C1, C2; a loop R -[P161]-> R.
func fanGraph() map[string]kg.Subgraph {
	return map[string]kg.Subgraph{"R": {Root: "R", Edges: []kg.Edge{
		{From: "R", To: "X1", PID: "P161"}, {From: "R", To: "X2", PID: "P161"}, {From: "R", To: "X3", PID: "P161"},
		{From: "R", To: "X3", PID: "P161"}, {From: "R", To: "R", PID: "P161"},
		{From: "R", To: "Y", PID: "P30"},
		{From: "Z", To: "R", PID: "P57"},
		{From: "X1", To: "C1", PID: "P27"}, {From: "X1", To: "C2", PID: "P27"},
	}}}
}

func TestFanoutCountsEachRelationAndDirection(t *testing.T) {
	f := NewFanout(fanGraph())
	for _, c := range []struct {
		step Step
		want int
	}{
		{Step{From: "R", PID: "P161", To: "X1"}, 3}, // distinct objects, no loop, no duplicate
		{Step{From: "R", PID: "P30", To: "Y"}, 1},
		{Step{From: "R", PID: "P57", To: "Z", Backward: true}, 1},
		{Step{From: "R", PID: "P57", To: "Z"}, 1}, // no forward P57 edge from R: at least 1
		{Step{From: "X1", PID: "P27", To: "C1"}, 2},
		{Step{From: "X1", PID: "P161", To: "R", Backward: true}, 1},
	} {
		if got := f.Step("R", c.step); got != c.want {
			t.Errorf("%+v: fan-out %d, want %d", c.step, got, c.want)
		}
	}
	if got := f.Step("nowhere", Step{From: "R", PID: "P161"}); got != 0 {
		t.Errorf("a root not walked: fan-out %d, want 0", got)
	}
}

func TestFanoutLogMean(t *testing.T) {
	f := NewFanout(fanGraph())
	one := Path{Entity: "X2", Steps: []Step{{From: "R", PID: "P161", To: "X2"}}}
	if got, want := f.LogMean(one), math.Log(3); math.Abs(got-want) > 1e-12 {
		t.Errorf("one hop: %v, want ln 3 = %v", got, want)
	}
	single := Path{Entity: "Y", Steps: []Step{{From: "R", PID: "P30", To: "Y"}}}
	if got := f.LogMean(single); got != 0 {
		t.Errorf("a relation reaching one entity: %v, want 0", got)
	}
	two := Path{Entity: "C1", Steps: []Step{{From: "R", PID: "P161", To: "X1"}, {From: "X1", PID: "P27", To: "C1"}}}
	if got, want := f.LogMean(two), (math.Log(3)+math.Log(2))/2; math.Abs(got-want) > 1e-12 {
		t.Errorf("two hops: %v, want the mean %v", got, want)
	}
	if got := f.LogMean(Path{Entity: "R"}); got != 0 {
		t.Errorf("no steps: %v, want 0", got)
	}
}
