package pipeline_test

import (
	"context"
	"math"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// graph_fanout subtracts w x the mean ln(fan-out) of a path's steps from its
// document's graph score, counted in the walked subgraphs; the breakdown
// says how much; off, nothing changes.
func TestGraphFanout(t *testing.T) {
	ctx := context.Background()
	p := newPipeline(t, nil)
	o := p.Defaults()
	o.GraphRecall, o.K, o.P = 2, 20, 20
	before := graphScores(t, walk(t, p, o), func(gp *pipeline.GraphPath) float64 { return gp.Fanout })
	const w = 0.2
	o.Experiments.GraphFanout = w
	fan := walk(t, p, o)
	roots := map[string]bool{}
	for _, d := range fan.Results {
		roots[d.Breakdown.Graph.Steps[0].From] = true
	}
	var rs []string
	for r := range roots {
		rs = append(rs, r)
	}
	subs, err := p.ChannelSubgraphs(ctx, rs, o.GraphRecall, o.HubDegree)
	if err != nil {
		t.Fatal(err)
	}
	count := pathrel.NewFanout(subs)
	penalised, compared := 0, 0
	for _, d := range fan.Results {
		gp := d.Breakdown.Graph
		want := -w * count.LogMean(pathrel.Path{Entity: d.ID, Steps: gp.Steps})
		if math.Abs(gp.Fanout-want) > 1e-12 {
			t.Errorf("%s (%s): fanout %v, want %v", d.ID, gp.Path, gp.Fanout, want)
		}
		if gp.Fanout < 0 {
			penalised++
		}
		if b, ok := before[d.ID]; ok {
			compared++
			if math.Abs(gp.Score-b-gp.Fanout) > 1e-9 {
				t.Errorf("%s: score %v, want %v + fanout %v", d.ID, gp.Score, b, gp.Fanout)
			}
		}
	}
	if penalised == 0 || compared == 0 {
		t.Fatalf("%d results penalised, %d compared: the test shows nothing", penalised, compared)
	}
	o.Experiments.GraphFanout = 1.5
	if _, err := p.GraphWalk(ctx, nolan, o); err == nil {
		t.Fatal("graph_fanout 1.5 was accepted")
	}
}

// walk is the graph channel alone on nolan with o.
func walk(t *testing.T, p *pipeline.Pipeline, o pipeline.Options) *pipeline.Result {
	t.Helper()
	res, err := p.GraphWalk(context.Background(), nolan, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// graphScores are the results' graph scores by document ID; part (the
// share of the score of an option that was off) must be 0 for each.
func graphScores(t *testing.T, res *pipeline.Result, part func(*pipeline.GraphPath) float64) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, d := range res.Results {
		out[d.ID] = d.Breakdown.Graph.Score
		if v := part(d.Breakdown.Graph); v != 0 {
			t.Fatalf("%s: %v of its score from an option that is off", d.ID, v)
		}
	}
	return out
}
