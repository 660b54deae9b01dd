package pipeline_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// countingGraph counts the calls (round trips, on a remote backend) a
// request makes to each method of the graph ports dmar's path uses.
type countingGraph struct {
	*memkg.Graph
	mu    sync.Mutex
	calls map[string]int
	// nbRoots are the roots of each neighbourhoods call, in call order.
	nbRoots [][]string
}

func (g *countingGraph) neighbourhoodRoots(roots []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nbRoots = append(g.nbRoots, append([]string(nil), roots...))
}

// checkNeighbourhoodCalls: the channel reads the linked roots'
// neighbourhoods while stage 1 searches, then only the roots that stage 1
// added (the top document's entity), never one root twice.
func checkNeighbourhoodCalls(t *testing.T, g *countingGraph) {
	t.Helper()
	if len(g.nbRoots) == 0 || len(g.nbRoots) > 2 {
		t.Errorf("%d neighbourhoods calls, want 1 or 2: %v", len(g.nbRoots), g.nbRoots)
	}
	seen := map[string]bool{}
	for _, call := range g.nbRoots {
		for _, q := range call {
			if seen[q] {
				t.Errorf("root %s read twice: %v", q, g.nbRoots)
			}
			seen[q] = true
		}
	}
}

func (g *countingGraph) count(m string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls[m]++
}

func (g *countingGraph) Subgraphs(ctx context.Context, roots []string, p kg.SubgraphParams) (map[string]kg.Subgraph, error) {
	g.count("Subgraphs")
	return g.Graph.Subgraphs(ctx, roots, p)
}

func (g *countingGraph) Neighbourhoods(ctx context.Context, roots []string, p kg.SubgraphParams) (map[string]kg.Subgraph, error) {
	g.count("Neighbourhoods")
	g.neighbourhoodRoots(roots)
	return g.Graph.Neighbourhoods(ctx, roots, p)
}

func (g *countingGraph) LinkCandidates(ctx context.Context, text string) ([]kg.Token, []kg.SpanCandidates, error) {
	g.count("LinkCandidates")
	return g.Graph.LinkCandidates(ctx, text)
}

func (g *countingGraph) Entities(ctx context.Context, qids []string) (map[string]kg.Entity, error) {
	g.count("Entities")
	return g.Graph.Entities(ctx, qids)
}

func (g *countingGraph) Degrees(ctx context.Context, qids []string) (map[string]int, error) {
	g.count("Degrees")
	return g.Graph.Degrees(ctx, qids)
}

// dmar's question-aware path takes one graph call per stage: linking, the
// channel's neighbourhoods (a hub query entity's star included; the linked
// roots' read while stage 1 searches, then the roots stage 1 added), G_Q with
// the candidates' subgraphs, the entities' labels, and the rerank's
// subgraphs, plus one Degrees call for the degrees of the entities the
// channel reached (graph_popularity); and the channel's
// neighbourhoods are those of two Subgraphs calls (kg.Neighbourhoods'
// composition for a graph without the one-call port).
func TestQuestionAwareOneGraphCallPerStage(t *testing.T) {
	mg, _ := film(t)
	g := &countingGraph{Graph: mg, calls: map[string]int{}}
	p := newPipeline(t, func(c *pipeline.Config) { c.Graph = g })
	const q = "Which films were produced in Canada?" // Canada: degree 522, a hub at the default cap 500
	// With the paper's stages on, which read the graph at every stage.
	o := p.Defaults().QuestionAware().WithPaperStages()
	res := retrieve(t, p, q, o)
	hubRoot := false
	for _, e := range res.QueryEntities {
		hubRoot = hubRoot || e.QID == "Q16"
	}
	if !hubRoot {
		t.Fatalf("the question links %v, not Canada (Q16): the case tests no hub root", res.QueryEntities)
	}
	// Subgraphs: phase 2 (G_Q and the stage-1 candidates) and the rerank
	// (the stage-2 candidates not yet cached: none when stage 2 found only
	// stage-1 documents).
	want := map[string]int{"LinkCandidates": 1, "Subgraphs": 2, "Entities": 1, "Degrees": 1}
	checkNeighbourhoodCalls(t, g)
	for m, n := range want {
		if g.calls[m] != n && (m != "Subgraphs" || g.calls[m] != 1) {
			t.Errorf("%s called %d times, want %d (all calls: %v)", m, g.calls[m], n, g.calls)
		}
	}
	// With stage 2 searched by enc(Q'), new candidates come (the method's
	// stage 2), and the rerank makes its one call.
	g2 := &countingGraph{Graph: mg, calls: map[string]int{}}
	p2 := newPipeline(t, func(c *pipeline.Config) { c.Graph = g2 })
	o2 := o
	o2.Stage2Vector = "reformulated"
	retrieve(t, p2, q, o2)
	if g2.calls["Subgraphs"] != 2 {
		t.Errorf("stage 2 by enc(Q'): Subgraphs called %d times, want 2 (all calls: %v)", g2.calls["Subgraphs"], g2.calls)
	}

	roots := []string{"Q16", "Q25191"}
	got, err := p.ChannelSubgraphs(context.Background(), roots, 1, o.HubDegree)
	if err != nil {
		t.Fatal(err)
	}
	composed, err := kg.Neighbourhoods(context.Background(), struct{ kg.Graph }{mg}, roots, kg.SubgraphParams{Hops: 1, MaxNodes: 4000, HubDegree: o.HubDegree})
	if err != nil {
		t.Fatal(err)
	}
	if len(got["Q16"].Nodes) < 2 || len(got["Q16"].Edges) == 0 {
		t.Fatalf("Canada's star has %d nodes, %d edges", len(got["Q16"].Nodes), len(got["Q16"].Edges))
	}
	for _, r := range roots {
		if !equalSubgraphs(got[r], composed[r]) {
			t.Errorf("channel neighbourhood of %s differs from the composed one", r)
		}
	}
}

func equalSubgraphs(a, b kg.Subgraph) bool {
	if a.Root != b.Root || a.Truncated != b.Truncated || len(a.Nodes) != len(b.Nodes) || len(a.Edges) != len(b.Edges) {
		return false
	}
	for i := range a.Nodes {
		if a.Nodes[i] != b.Nodes[i] {
			return false
		}
	}
	for i := range a.Edges {
		if a.Edges[i] != b.Edges[i] {
			return false
		}
	}
	return true
}

// degreeGraph reads the neighbourhoods' degrees with them, as neo4jkg does
// (kg.NeighbourhoodDegreeReader), from memkg's answers.
type degreeGraph struct{ *countingGraph }

func (g degreeGraph) NeighbourhoodDegrees(ctx context.Context, roots []string, p kg.SubgraphParams) (map[string]kg.Subgraph, map[string]int, error) {
	g.count("NeighbourhoodDegrees")
	g.neighbourhoodRoots(roots)
	subs, err := g.Graph.Neighbourhoods(ctx, roots, p)
	if err != nil {
		return nil, nil, err
	}
	var qids []string
	for _, sg := range subs {
		for _, n := range sg.Nodes {
			qids = append(qids, n.QID)
		}
	}
	ents, err := g.Graph.Entities(ctx, qids)
	deg := make(map[string]int, len(ents))
	for q, e := range ents {
		deg[q] = e.Degree
	}
	return subs, deg, err
}

// A graph that reads the neighbourhoods' degrees with them saves the
// channel's Degrees call for popularity and ranks exactly as before.
func TestChannelPopularityFromNeighbourhoodDegrees(t *testing.T) {
	mg, _ := film(t)
	plain := &countingGraph{Graph: mg, calls: map[string]int{}}
	withDeg := degreeGraph{&countingGraph{Graph: mg, calls: map[string]int{}}}
	p1 := newPipeline(t, func(c *pipeline.Config) { c.Graph = plain })
	p2 := newPipeline(t, func(c *pipeline.Config) { c.Graph = withDeg })
	o := p1.Defaults().QuestionAware()
	if o.GraphPopularity == 0 {
		t.Fatal("the question-aware method has no popularity term: the case tests nothing")
	}
	for _, q := range []string{"Which films were produced in Canada?", "Who directed Inception?", "What films did Christopher Nolan direct?"} {
		a := retrieve(t, p1, q, o)
		b := retrieve(t, p2, q, o)
		a.TimingsMS, b.TimingsMS = nil, nil
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("%q: the results differ with the degrees read with the neighbourhoods (-Entities +neighbourhoods):\n%s", q, diff)
		}
	}
	if plain.calls["Entities"] != 3 || plain.calls["Degrees"] != 3 || withDeg.calls["Entities"] != 3 || withDeg.calls["Degrees"] != 0 || withDeg.calls["NeighbourhoodDegrees"] < 3 || withDeg.calls["Neighbourhoods"] != 0 {
		t.Errorf("calls: %v without the port, %v with it; want 1 Entities and 1 Degrees a request without, 1 Entities with", plain.calls, withDeg.calls)
	}
	if withDeg.calls["NeighbourhoodDegrees"] != plain.calls["Neighbourhoods"] {
		t.Errorf("%d calls with the degrees, %d without: the same reads, want as many", withDeg.calls["NeighbourhoodDegrees"], plain.calls["Neighbourhoods"])
	}
}
