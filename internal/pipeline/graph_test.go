package pipeline_test

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// With graph_recall 0 the other graph options change nothing: the channel is
// off and the answer is the paper's.
func TestGraphRecallOffIsThePaper(t *testing.T) {
	p := newPipeline(t, nil)
	a := retrieve(t, p, nolan, p.Defaults())
	o := p.Defaults()
	if o.GraphRecall != 0 {
		t.Fatalf("graph_recall defaults to %d, want 0 (off)", o.GraphRecall)
	}
	o.GraphRecallK, o.GraphWeight, o.GraphBoost, o.GraphRelations = 7, 0.9, 5, "directed"
	b := retrieve(t, p, nolan, o)
	a.TimingsMS, b.TimingsMS = nil, nil
	b.Options = a.Options
	if !reflect.DeepEqual(a, b) {
		t.Fatal("graph options changed the answer with graph_recall 0")
	}
	for _, d := range a.Results {
		if d.Breakdown.Source != "" || d.Breakdown.Graph != nil {
			t.Fatalf("result %s has a graph source with the channel off", d.ID)
		}
	}
}

// With graph_recall on, the documents of the query entities' neighbours join
// the stage-1 candidates, each with the path that brought it.
func TestGraphRecallAddsPathDocuments(t *testing.T) {
	p := newPipeline(t, nil)
	g, _ := film(t)
	ms, err := g.Link(context.Background(), nolan)
	if err != nil || len(ms) == 0 {
		t.Fatalf("link: %v, %v", ms, err)
	}
	roots := map[string]bool{}
	for _, q := range kg.QIDs(ms) {
		roots[q] = true
	}
	for _, hops := range []int{1, 2} {
		o := p.Defaults()
		o.GraphRecall, o.GraphRecallK = hops, 10
		docs, _, err := p.Candidates(context.Background(), nolan, o)
		if err != nil {
			t.Fatal(err)
		}
		kgDocs := 0
		for _, d := range docs {
			if d.Breakdown.Source != "kg" {
				continue
			}
			kgDocs++
			gp := d.Breakdown.Graph
			if gp == nil || len(gp.Steps) == 0 || len(gp.Steps) > hops {
				t.Fatalf("%d hops: document %s has path %+v", hops, d.ID, gp)
			}
			if !roots[gp.Steps[0].From] || gp.Steps[len(gp.Steps)-1].To != d.ID || !strings.Contains(gp.Path, " -[") {
				t.Fatalf("%d hops: document %s's path %q does not run from a query entity to it", hops, d.ID, gp.Path)
			}
		}
		if kgDocs == 0 || kgDocs > 10 {
			t.Fatalf("%d hops: %d candidates from the graph channel, want 1 to 10", hops, kgDocs)
		}
	}
	o := p.Defaults()
	o.GraphRecall = 1
	res := retrieve(t, p, nolan, o)
	if len(res.Results) != o.K {
		t.Fatalf("%d results, want %d", len(res.Results), o.K)
	}
}

func TestGraphWalk(t *testing.T) {
	p := newPipeline(t, nil)
	o := p.Defaults()
	o.GraphRecall = 1
	res := answer(t, p.GraphWalk, nolan, o)
	if len(res.Results) == 0 || len(res.Results) > o.K || len(res.QueryEntities) == 0 {
		t.Fatalf("%d results for %d query entities", len(res.Results), len(res.QueryEntities))
	}
	for i, d := range res.Results {
		if d.Breakdown.Source != "kg" || d.Breakdown.Graph == nil || d.Rank != i+1 {
			t.Fatalf("result %d: %+v", i, d)
		}
		if i > 0 && d.Score > res.Results[i-1].Score {
			t.Fatal("results are not ranked by graph score")
		}
	}
	// The request's filter applies to the channel.
	f := o
	f.Filter.IDs = []string{res.Results[len(res.Results)-1].ID, "Q-not-a-document"}
	fres := answer(t, p.GraphWalk, nolan, f)
	if len(fres.Results) != 1 || fres.Results[0].ID != f.Filter.IDs[0] {
		t.Fatalf("filtered walk: %v", fres.Results)
	}
	// Every node a hub, the query entities included: their own neighbours
	// are still walked.
	hub := o
	hub.HubDegree, hub.GraphRecall = 1, 2
	hres := answer(t, p.GraphWalk, nolan, hub)
	if len(hres.Results) == 0 {
		t.Fatal("a hub query entity's neighbours were not walked")
	}
	for _, d := range hres.Results {
		if len(d.Breakdown.Graph.Steps) != 1 {
			t.Fatalf("path %q passes through a hub", d.Breakdown.Graph.Path)
		}
	}
	none := answer(t, p.GraphWalk, "what happens when dreams collapse inside other dreams", o)
	if len(none.QueryEntities) == 0 && (len(none.Results) != 0 || !strings.Contains(strings.Join(fallbackNames(none), ","), "graph_recall_no_entities")) {
		t.Fatalf("no entity: %d results, fallbacks %v", len(none.Results), fallbackNames(none))
	}
}

func TestGraphOptionsValidated(t *testing.T) {
	p := newPipeline(t, nil)
	for _, c := range []struct {
		mod   func(*pipeline.Options)
		field string
	}{
		{func(o *pipeline.Options) { o.GraphRecall = 3 }, "graph_recall"},
		{func(o *pipeline.Options) { o.GraphRecall = -1 }, "graph_recall"},
		{func(o *pipeline.Options) { o.GraphRecallK = 0 }, "graph_recall_k"},
		{func(o *pipeline.Options) { o.GraphRecallK = 501 }, "graph_recall_k"},
		{func(o *pipeline.Options) { o.GraphWeight = 1.5 }, "graph_weight"},
		{func(o *pipeline.Options) { o.GraphBoost = 101 }, "graph_boost"},
		{func(o *pipeline.Options) { o.GraphBoost = -1 }, "graph_boost"},
		{func(o *pipeline.Options) { o.GraphRoots = 11 }, "graph_roots"},
		{func(o *pipeline.Options) { o.GraphRoots = -1 }, "graph_roots"},
		{func(o *pipeline.Options) { o.GraphRelations = "both" }, "graph_relations"},
	} {
		o := p.Defaults()
		c.mod(&o)
		_, err := p.Retrieve(context.Background(), nolan, o)
		e, ok := errs.As(err)
		if !ok || e.Code != errs.Invalid || e.Field != c.field || !strings.Contains(e.Message, c.field) {
			t.Errorf("error %v, want one naming %q", err, c.field)
		}
	}
}

// With graph_roots, the entity of the top stage-1 document is a root too:
// a query the linker finds nothing in still walks from the page that the
// search found first.
func TestGraphRootsWalkFromTheTopDocument(t *testing.T) {
	p := newPipeline(t, nil)
	g, _ := film(t)
	const q = "nolan films directed"
	if ms, err := g.Link(context.Background(), q); err != nil || len(ms) != 0 {
		t.Fatalf("the test query must link to nothing, got %v, %v", ms, err)
	}
	o := p.Defaults()
	o.GraphRecall, o.GraphRecallK = 1, 10
	off := answer(t, p.GraphWalk, q, o)
	if len(off.Results) != 0 {
		t.Fatalf("graph_roots 0: %d results from a query with no entity, want 0", len(off.Results))
	}
	o.GraphRoots = 1
	on := answer(t, p.GraphWalk, q, o)
	hits, err := p.Index().Search(context.Background(), retrievalBM25(q, 1))
	if err != nil || len(hits) != 1 {
		t.Fatalf("search: %v, %v", hits, err)
	}
	top := hits[0].Doc.ID
	if len(on.Results) == 0 {
		t.Fatalf("graph_roots 1: no results; the top document %s should be a root", top)
	}
	for _, d := range on.Results {
		if gp := d.Breakdown.Graph; gp == nil || gp.Steps[0].From != top {
			t.Fatalf("result %s's path %+v does not start at the top document's entity %s", d.ID, d.Breakdown.Graph, top)
		}
	}
}

// stepPrior: the prior's weight scales each step's relevance, so a strong
// prior on one relation brings its documents to the top of the channel.
type onePrior struct{ key string }

func (p onePrior) Prior(_ context.Context, _ []float32) (map[pathrel.StepKey]float64, error) {
	return map[pathrel.StepKey]float64{{PID: p.key}: 1, {PID: p.key, Backward: true}: 1}, nil
}

func TestPathPriorRanksItsRelationFirst(t *testing.T) {
	// The relations on the paths to the documents the channel reaches.
	base := newPipeline(t, nil)
	o := base.Defaults()
	o.GraphRecall, o.GraphRecallK = 1, 500
	all := answer(t, base.GraphWalk, nolan, o)
	pids := map[string]bool{}
	for _, d := range all.Results {
		pids[d.Breakdown.Graph.Steps[0].PID] = true
	}
	if len(pids) < 2 {
		t.Fatalf("the test needs two relations around the query entities, got %v", pids)
	}
	for pid := range pids {
		p, err := newPipeline(t, func(c *pipeline.Config) { c.RelPrior = onePrior{pid} }).WithPathPrior(5)
		if err != nil {
			t.Fatal(err)
		}
		o := p.Defaults()
		o.GraphRecall, o.GraphRecallK = 1, 3
		r := answer(t, p.GraphWalk, nolan, o)
		if len(r.Results) == 0 || r.Results[0].Breakdown.Graph.Steps[0].PID != pid {
			t.Fatalf("prior on %s: top result's path %+v does not use it", pid, r.Results[0].Breakdown.Graph)
		}
		if hasFallback(r, "path_prior_unavailable") {
			t.Fatal("path_prior_unavailable with a prior loaded")
		}
	}
	withPrior, err := base.WithPathPrior(1)
	if err != nil {
		t.Fatal(err)
	}
	o = base.Defaults()
	o.GraphRecall = 1
	r := answer(t, withPrior.GraphWalk, nolan, o)
	if !hasFallback(r, "path_prior_unavailable") {
		t.Fatalf("no prior loaded: fallbacks %v, want path_prior_unavailable", fallbackNames(r))
	}
	// The composition is checked where it is made; the method's pipeline
	// is not changed by it.
	for _, w := range []float64{-0.1, pipeline.MaxPathPrior + 0.5} {
		if _, err := base.WithPathPrior(w); err == nil {
			t.Errorf("path prior %v was accepted", w)
		}
	}
	if r, err := base.GraphWalk(context.Background(), nolan, o); err != nil || hasFallback(r, "path_prior_unavailable") {
		t.Fatalf("the pipeline composed from: %v, fallbacks %v", err, fallbackNames(r))
	}
}

func retrievalBM25(q string, n int) retrieval.Query {
	return retrieval.Query{Mode: retrieval.BM25, Text: q, Limit: n}
}

// structure_needs_channel: a request whose graph channel reached no document
// scores semantics only and says so; without the option the structural
// score stays on for the same request.
func TestStructureNeedsChannel(t *testing.T) {
	p := newPipeline(t, nil)
	o := p.Defaults()
	o.GraphRecall = 1
	// Only the query entity's own page may be returned: the channel's
	// neighbours are all filtered out, so it reaches no document.
	o.Filter = retrieval.Filter{IDs: []string{nolanQID}}
	for _, needs := range []bool{false, true} {
		o.StructureNeedsChannel = needs
		res := retrieve(t, p, nolan, o)
		if len(res.Results) == 0 {
			t.Fatal("no results")
		}
		fell := false
		for _, f := range res.Fallbacks {
			fell = fell || f.Name == "no_graph_evidence"
		}
		for _, d := range res.Results {
			if d.Breakdown.Source == "kg" {
				t.Fatalf("result %s came from the graph channel through the filter", d.ID)
			}
			semOnly := d.Breakdown.Gate.Semantic == 1 && d.Breakdown.Gate.Structural == 0
			if semOnly != needs {
				t.Fatalf("structure_needs_channel %v: %s has gate %+v", needs, d.ID, d.Breakdown.Gate)
			}
		}
		if fell != needs {
			t.Fatalf("structure_needs_channel %v: fallback no_graph_evidence reported %v (%v)", needs, fell, res.Fallbacks)
		}
	}
}

// graph_popularity adds w x ln(1 + degree) of each reached entity to its
// document's graph score, and the breakdown says how much.
func TestGraphPopularity(t *testing.T) {
	g, _ := film(t)
	p := newPipeline(t, nil)
	o := p.Defaults()
	o.GraphRecall = 1
	base := answer(t, p.GraphWalk, nolan, o)
	o.GraphPopularity = 0.5
	pop := answer(t, p.GraphWalk, nolan, o)
	before := map[string]float64{}
	for _, d := range base.Results {
		before[d.ID] = d.Breakdown.Graph.Score
		if d.Breakdown.Graph.Popularity != 0 {
			t.Fatalf("%s: popularity %v with the option off", d.ID, d.Breakdown.Graph.Popularity)
		}
	}
	ents, err := g.Entities(context.Background(), []string{pop.Results[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	top := pop.Results[0]
	want := 0.5 * math.Log1p(float64(ents[top.ID].Degree))
	if gp := top.Breakdown.Graph; math.Abs(gp.Popularity-want) > 1e-12 || want == 0 {
		t.Fatalf("%s: popularity %v, want %v", top.ID, gp.Popularity, want)
	}
	for _, d := range pop.Results {
		if b, ok := before[d.ID]; ok && math.Abs(d.Breakdown.Graph.Score-b-d.Breakdown.Graph.Popularity) > 1e-9 {
			t.Errorf("%s: score %v, want %v + popularity %v", d.ID, d.Breakdown.Graph.Score, b, d.Breakdown.Graph.Popularity)
		}
	}
	o.GraphPopularity = 1.5
	if _, err := p.GraphWalk(context.Background(), nolan, o); err == nil {
		t.Fatal("graph_popularity 1.5 was accepted")
	}
}
