package pipeline_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// A question whose words are a relation's label: the hash encoder's cosine
// ranks that relation first, as a sentence encoder would.
const bornQ = "Christopher Nolan place of birth"

// reform_rank shapley is the method's reformulation: the same answer as an
// unset reform_rank, byte for byte.
func TestReformRankShapleyIsTheDefault(t *testing.T) {
	p := newPipeline(t, nil)
	a, err := p.Retrieve(context.Background(), nolan, p.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	o := p.Defaults()
	o.Experiments.ReformRank = "shapley"
	o.Experiments.ReformBridges, o.Experiments.ReformRelations = pipeline.DefaultShapleyBridges, pipeline.DefaultShapleyRelations
	b, err := p.Retrieve(context.Background(), nolan, o)
	if err != nil {
		t.Fatal(err)
	}
	a.TimingsMS, b.TimingsMS, b.Options = nil, nil, a.Options
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("reform_rank shapley changed the answer: Q' %q vs %q", a.ReformulatedQuery, b.ReformulatedQuery)
	}
}

// reform_rank question puts the bridge entity reached by the most
// question-relevant KG path into Q', and Q' stays shorter than the method's.
func TestReformRankQuestion(t *testing.T) {
	p := newPipeline(t, nil)
	ctx := context.Background()
	paper, err := p.Retrieve(ctx, bornQ, p.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	o := p.Defaults()
	o.Experiments.ReformRank, o.Experiments.ReformBridges, o.Experiments.ReformRelations = "question", 1, 1
	res, err := p.Retrieve(ctx, bornQ, o)
	if err != nil {
		t.Fatal(err)
	}
	// The bridges as the method defines them: the anchors' entities that are
	// non-root nodes of a query subgraph; their relevance recomputed here
	// with pathrel over the same subgraphs.
	roots := []string{}
	subs := map[string]kg.Subgraph{}
	label := map[string]string{}
	for _, sg := range res.QuerySubgraphs {
		roots = append(roots, sg.Root)
		subs[sg.Root] = sg
		for _, n := range sg.Nodes {
			label[n.QID] = n.Label
		}
	}
	if len(roots) == 0 {
		t.Fatal("the question links to no entity")
	}
	qv, _ := hashEncoder{}.Encode(ctx, []string{bornQ})
	paths, err := pathrel.NewRelations(hashEncoder{}, false).Reach(ctx, qv[0], pathrel.Mentioned(roots...), subs, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rel := map[string]float64{}
	for _, pa := range paths {
		rel[pa.Entity] = pa.Relevance
	}
	best, bestLabels := -2.0, map[string]bool{}
	for _, a := range res.Anchors {
		for _, e := range a.Entities {
			v, ok := rel[e]
			if !ok {
				continue
			}
			if v > best {
				best, bestLabels = v, map[string]bool{}
			}
			if v == best {
				bestLabels[label[e]] = true
			}
		}
	}
	if len(bestLabels) == 0 {
		t.Fatal("no bridge entity in the anchors: the test question does not exercise the ranking")
	}
	found := false
	for l := range bestLabels {
		found = found || strings.Contains(res.ReformulatedQuery, l)
	}
	if !found {
		t.Errorf("Q' %q holds none of the most relevant bridges %v (relevance %.3f)", res.ReformulatedQuery, bestLabels, best)
	}
	if !strings.HasPrefix(res.ReformulatedQuery, bornQ) || len(strings.Fields(res.ReformulatedQuery)) >= len(strings.Fields(paper.ReformulatedQuery)) {
		t.Errorf("Q' %q is not Q extended and shorter than the method's %q", res.ReformulatedQuery, paper.ReformulatedQuery)
	}
	// The ranking only reorders what Q' may hold: it never brings in a term
	// that is neither Q, an anchor title nor a label of G_Q's nodes or edges.
	allowed := strings.ToLower(bornQ)
	for _, a := range res.Anchors {
		allowed += " " + strings.ToLower(a.Title)
	}
	for _, sg := range res.QuerySubgraphs {
		for _, e := range sg.Edges {
			allowed += " " + strings.ToLower(e.Label)
		}
	}
	for l := range label {
		allowed += " " + strings.ToLower(label[l])
	}
	for _, w := range strings.Fields(strings.ToLower(res.ReformulatedQuery)) {
		if !strings.Contains(allowed, w) {
			t.Errorf("Q' word %q comes from nowhere", w)
		}
	}
}

func TestReformOptionsValidated(t *testing.T) {
	p := newPipeline(t, nil)
	for _, c := range []struct {
		field string
		mod   func(*pipeline.Options)
	}{
		{"reform_rank", func(o *pipeline.Options) { o.Experiments.ReformRank = "utility" }},
		{"reform_bridges", func(o *pipeline.Options) { o.Experiments.ReformBridges = 51 }},
		{"reform_relations", func(o *pipeline.Options) { o.Experiments.ReformRelations = -1 }},
	} {
		o := p.Defaults()
		c.mod(&o)
		_, err := p.Retrieve(context.Background(), nolan, o)
		if e, ok := errs.As(err); !ok || e.Field != c.field {
			t.Errorf("%s: error %v, want one naming the field", c.field, err)
		}
	}
	o := p.Defaults()
	if b, r := o.Experiments.ReformCaps(); b != 8 || r != 4 {
		t.Errorf("shapley caps %d/%d, want the method's 8/4", b, r)
	}
	o.Experiments.ReformRank, o.Experiments.ReformRelations = "question", 3
	if b, r := o.Experiments.ReformCaps(); b != pipeline.DefaultQuestionBridges || r != 3 {
		t.Errorf("question caps %d/%d", b, r)
	}
}
