package pipeline_test

import (
	"context"
	"math"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// graph_fanout subtracts w x the mean ln(fan-out) of a path's steps from its
// document's graph score, counted in the walked subgraphs; off, nothing
// changes.
func TestGraphFanout(t *testing.T) {
	ctx := context.Background()
	p := newPipeline(t, nil)
	o := p.Defaults()
	o.GraphRecall, o.K, o.P = 2, 20, 20
	before := graphScores(walk(t, p, o))
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
		if want < 0 {
			penalised++
		}
		if b, ok := before[d.ID]; ok {
			compared++
			if math.Abs(gp.Score-b-want) > 1e-9 {
				t.Errorf("%s (%s): score %v, want %v + fanout %v", d.ID, gp.Path, gp.Score, b, want)
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

// graphScores are the results' graph scores by document ID.
func graphScores(res *pipeline.Result) map[string]float64 {
	out := map[string]float64{}
	for _, d := range res.Results {
		out[d.ID] = d.Breakdown.Graph.Score
	}
	return out
}
