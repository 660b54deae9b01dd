package pipeline_test

import (
	"context"
	"math"
	"testing"

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
	base, err := p.GraphWalk(ctx, nolan, o)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]float64{}
	for _, d := range base.Results {
		before[d.ID] = d.Breakdown.Graph.Score
		if d.Breakdown.Graph.Fanout != 0 {
			t.Fatalf("%s: fanout %v with the option off", d.ID, d.Breakdown.Graph.Fanout)
		}
	}
	const w = 0.2
	o.GraphFanout = w
	fan, err := p.GraphWalk(ctx, nolan, o)
	if err != nil {
		t.Fatal(err)
	}
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
	o.GraphFanout = 1.5
	if _, err := p.GraphWalk(ctx, nolan, o); err == nil {
		t.Fatal("graph_fanout 1.5 was accepted")
	}
}
