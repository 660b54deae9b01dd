package pipeline_test

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"sync"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// ruleRanker is a test double for the learned ranker: a fixed rule over the
// inputs (a query entity's own page first, then what the graph reached,
// each by its cosine); it records what it saw.
type ruleRanker struct {
	mu   sync.Mutex
	seen [][]scoring.RankInput
	err  error
}

func (*ruleRanker) Version() string { return "test-rule-ranker" }
func (r *ruleRanker) Scores(ctx context.Context, docs []scoring.RankInput) ([]float64, error) {
	r.mu.Lock()
	r.seen = append(r.seen, docs)
	r.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	out := make([]float64, len(docs))
	for i, d := range docs {
		out[i] = 10*d.Own + 5*b2f(d.Reached) + d.Semantic
	}
	return out, ctx.Err()
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// final_rank learned orders every candidate the request found by the
// ranker's score: the query entity's own page (which the graph channel
// never returns) comes first under a rule that says so, the channel's
// documents next, and the results say where each was found.
func TestLearnedFinalRankOrdersThePool(t *testing.T) {
	rk := &ruleRanker{}
	p := newPipeline(t, func(c *pipeline.Config) { c.Ranker = rk })
	o := p.Defaults().QuestionAware()
	if o.FinalRank != pipeline.FinalRankLearned {
		t.Fatalf("the dmar method ranks with %q", o.FinalRank)
	}
	res, err := p.Retrieve(context.Background(), nolan, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rk.seen) != 1 {
		t.Fatalf("the ranker was asked %d times, want once", len(rk.seen))
	}
	in := rk.seen[0]
	if res.Results[0].ID != "Q25191" || res.Results[0].Breakdown.Rank == nil || !res.Results[0].Breakdown.Rank.Own {
		t.Fatalf("first result %s (%+v), want Nolan's own page Q25191", res.Results[0].ID, res.Results[0].Breakdown.Rank)
	}
	for i, d := range res.Results {
		r := d.Breakdown.Rank
		if r == nil || r.Score != d.Score || d.Rank != i+1 {
			t.Fatalf("%s: rank breakdown %+v, score %v, rank %d", d.ID, r, d.Score, d.Rank)
		}
		if i > 0 && d.Score > res.Results[i-1].Score {
			t.Fatalf("results not in score order: %v after %v", d.Score, res.Results[i-1].Score)
		}
		if i > 0 && (r.GraphRank == 0) != (d.Breakdown.Graph == nil) {
			t.Fatalf("%s: graph rank %d but graph path %v", d.ID, r.GraphRank, d.Breakdown.Graph)
		}
	}
	// The pool holds the stage-1 search's hits, the channel's documents and
	// the own page, each once; the request-level inputs are shared.
	ids := map[string]bool{}
	stage1, reached, own := 0, 0, 0
	for _, x := range in {
		if x.InvRank1 > 0 {
			stage1++
		}
		if x.Reached {
			reached++
		}
		if x.Own > 0 {
			own++
		}
		if x.Question != in[0].Question || x.LinkConfMax != in[0].LinkConfMax || x.Agreement != in[0].Agreement || x.ChannelDocs != in[0].ChannelDocs {
			t.Fatalf("request-level inputs differ between candidates: %+v vs %+v", x, in[0])
		}
		if x.SemanticGap > 1e-12 || x.Agreement < 0 || x.Agreement > 1 {
			t.Fatalf("input out of range: %+v", x)
		}
	}
	for _, d := range res.Results {
		ids[d.ID] = true
	}
	if stage1 == 0 || reached == 0 || own != 1 || !in[0].Question || in[0].ChannelDocs == 0 {
		t.Fatalf("pool of %d: %d stage-1 hits, %d reached, %d own pages; question %v, channel %d", len(in), stage1, reached, own, in[0].Question, in[0].ChannelDocs)
	}
	if n := len(scoring.RankInput{}.Vector()); n != len(scoring.RankFeatures) {
		t.Fatalf("RankInput.Vector has %d columns, RankFeatures names %d", n, len(scoring.RankFeatures))
	}
}

// Without a ranker model final_rank learned keeps the boosted order and
// says so; a ranker that fails fails the request; final_rank boost (the
// paper's) never asks it and answers as before.
func TestLearnedFinalRankFallbackAndIsolation(t *testing.T) {
	p := newPipeline(t, nil)
	o := p.Defaults().QuestionAware()
	res := retrieve(t, p, nolan, o)
	if !hasFallback(res, "ranker_unavailable") {
		t.Fatalf("fallbacks %v, want ranker_unavailable", fallbackNames(res))
	}
	boost := o
	boost.FinalRank = pipeline.FinalRankBoost
	b, err := p.Retrieve(context.Background(), nolan, boost)
	if err != nil {
		t.Fatal(err)
	}
	if ids(res) != ids(b) {
		t.Fatalf("the fallback ranks %s, boost %s", ids(res), ids(b))
	}
	rk := &ruleRanker{}
	withRanker := newPipeline(t, func(c *pipeline.Config) { c.Ranker = rk })
	paper, err := withRanker.Retrieve(context.Background(), nolan, p.Defaults().Paper())
	if err != nil {
		t.Fatal(err)
	}
	plain, err := p.Retrieve(context.Background(), nolan, p.Defaults().Paper())
	if err != nil {
		t.Fatal(err)
	}
	paper.TimingsMS, plain.TimingsMS = nil, nil
	if !reflect.DeepEqual(paper, plain) || len(rk.seen) != 0 {
		t.Fatalf("a configured ranker changed the paper method's answer (asked %d times)", len(rk.seen))
	}
	failing := newPipeline(t, func(c *pipeline.Config) { c.Ranker = &ruleRanker{err: errors.New("model broke")} })
	if _, err := failing.Retrieve(context.Background(), nolan, o); err == nil {
		t.Fatal("a failing ranker did not fail the request")
	}
	bad := o
	bad.FinalRank = "fancy"
	if _, err := p.Retrieve(context.Background(), nolan, bad); err == nil {
		t.Fatal("final_rank fancy was accepted")
	}
}

// RetrieveRanked returns the final pool's rows, the same with or without a
// ranker loaded, and an answer equal to Retrieve's.
func TestRetrieveRankedRows(t *testing.T) {
	rk := &ruleRanker{}
	p := newPipeline(t, func(c *pipeline.Config) { c.Ranker = rk })
	o := p.Defaults().QuestionAware()
	res, rows, err := p.RetrieveRanked(context.Background(), nolan, o)
	if err != nil {
		t.Fatal(err)
	}
	answersAsRetrieve(t, p, nolan, o, res, "RetrieveRanked")
	_, noModel, err := newPipeline(t, nil).RetrieveRanked(context.Background(), nolan, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || !reflect.DeepEqual(rows, noModel) {
		t.Fatalf("rows with a ranker (%d) and without (%d) differ", len(rows), len(noModel))
	}
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.ID] {
			t.Fatalf("%s twice in the pool", r.ID)
		}
		seen[r.ID] = true
	}
	for _, d := range res.Results {
		if !seen[d.ID] {
			t.Fatalf("result %s is not in the pool's rows", d.ID)
		}
	}
}

// A filter applies to the pool's own pages too.
func TestLearnedFinalRankKeepsTheFilter(t *testing.T) {
	p := newPipeline(t, func(c *pipeline.Config) { c.Ranker = &ruleRanker{} })
	o := p.Defaults().QuestionAware()
	o.Filter = retrieval.Filter{IDs: []string{"Q25188", "Q163872", "Q46551"}}
	o.K = 3
	res, err := p.Retrieve(context.Background(), nolan, o)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, d := range res.Results {
		got = append(got, d.ID)
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"Q163872", "Q25188", "Q46551"}) {
		t.Fatalf("filtered results %v", got)
	}
}

func ids(r *pipeline.Result) string {
	s := ""
	for _, d := range r.Results {
		s += d.ID + " "
	}
	return s
}

// The page of an entity Q names joins the pool even when no search and no
// channel found it: fetched, scored semantically, marked as the own page.
func TestLearnedFinalRankFetchesOwnPages(t *testing.T) {
	rk := &ruleRanker{}
	p := newPipeline(t, func(c *pipeline.Config) { c.Ranker = rk })
	o := p.Defaults().QuestionAware()
	o.N, o.M, o.P, o.K, o.GraphRoots = 1, 1, 1, 1, 0
	const q = "Which films did Christopher Nolan make with Michael Caine and Hans Zimmer?"
	res, err := p.Retrieve(context.Background(), q, o)
	if err != nil {
		t.Fatal(err)
	}
	own := 0
	for _, x := range rk.seen[0] {
		if x.Own > 0 {
			own++
			if x.Semantic == 0 {
				t.Errorf("an own page without its cosine: %+v", x)
			}
		}
	}
	fetched := 0
	for _, x := range rk.seen[0] {
		if x.Own > 0 && x.InvRank1 == 0 && x.InvRank2 == 0 && !x.Reached {
			fetched++
		}
	}
	if own != len(res.QueryEntities) || fetched == 0 {
		t.Fatalf("%d own pages for %d query entities, %d found by neither search nor channel", own, len(res.QueryEntities), fetched)
	}
}

// The dmar method runs no stage the learned ranker does not need: no
// structural score, no anchors, no reformulation, no second search; the
// paper's method and WithPaperStages run them all.
func TestDmarSkipsThePapersStages(t *testing.T) {
	p := newPipeline(t, func(c *pipeline.Config) { c.Ranker = &ruleRanker{} })
	lean, err := p.Retrieve(context.Background(), nolan, p.Defaults().QuestionAware())
	if err != nil {
		t.Fatal(err)
	}
	if len(lean.Anchors) != 0 || lean.Reformulator != "none" || lean.ReformulatedQuery != nolan || len(lean.QueryEntities) == 0 || len(lean.Results) != 5 {
		t.Fatalf("dmar: %d anchors, reformulator %q (%q), %d query entities, %d results", len(lean.Anchors), lean.Reformulator, lean.ReformulatedQuery, len(lean.QueryEntities), len(lean.Results))
	}
	for _, stage := range []string{"subgraphs", "structural", "second_stage", "rerank", "reformulate"} {
		if _, ok := lean.TimingsMS[stage]; ok {
			t.Errorf("dmar ran stage %s", stage)
		}
	}
	for _, o := range []pipeline.Options{p.Defaults().QuestionAware().WithPaperStages(), p.Defaults().Paper()} {
		full, err := p.Retrieve(context.Background(), nolan, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(full.Anchors) != o.M || full.Reformulator == "none" {
			t.Fatalf("%s with the paper's stages: %d anchors, reformulator %q", o.Method, len(full.Anchors), full.Reformulator)
		}
		for _, stage := range []string{"second_stage", "rerank"} {
			if _, ok := full.TimingsMS[stage]; !ok {
				t.Errorf("%s with the paper's stages did not run %s", o.Method, stage)
			}
		}
	}
	if d, q := p.Defaults().Paper(), p.Defaults().QuestionAware().Paper(); d.M != 3 || d.Structure != "gnn" || q.M != 3 || q.Structure != "gnn" {
		t.Fatalf("the paper's method: m %d, structure %s (from dmar: %d, %s)", d.M, d.Structure, q.M, q.Structure)
	}
}
