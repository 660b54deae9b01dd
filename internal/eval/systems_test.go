package eval

import (
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

func TestGraphSystems(t *testing.T) {
	names := []string{"dmar", "dmar-paper", "dmar-full", "kg-walk", "dmar-graph", "dmar-graph-h2-b3-dir-k20-w0.5", "dmar-no-graph-recall", "dmar-no-path-relevance", "dmar-no-link-filter", "dmar-unmasked", "dmar-no-own-pages",
		"dmar-fixed-gate", "dmar-evidence-gate", "dmar-structure-always", "dmar-no-second-stage", "dmar-no-kg", "dmar-ged", "kg-walk-r1-h2-hyb"}
	ss, err := Systems(names, pipeline.Defaults(), 20, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]System{}
	for _, s := range ss {
		by[s.Name] = s
	}
	paper := pipeline.Defaults()
	paper.K, paper.P = 20, 20
	if !reflect.DeepEqual(*by["dmar-paper"].Options, paper) || by["dmar-paper"].Kind != "dmar" {
		t.Errorf("dmar-paper is not the paper's options: %+v", by["dmar-paper"].Options)
	}
	qa := paper.QuestionAware()
	if !reflect.DeepEqual(*by["dmar"].Options, qa) || qa.GraphRecall == 0 || qa.GraphRoots == 0 || qa.Linking != "context" {
		t.Errorf("dmar is not the question-aware method: %+v", by["dmar"].Options)
	}
	// dmar-full is dmar with the paper's stages on.
	full := qa.WithPaperStages()
	if !reflect.DeepEqual(*by["dmar-full"].Options, full) || full.M != 3 || full.Structure != "gnn" || qa.M != 0 || qa.Structure != "off" {
		t.Errorf("dmar-full: %+v", by["dmar-full"].Options)
	}
	// Each ablation changes exactly its part of dmar (the channel's) or of
	// dmar-full (the paper's stages).
	for name, c := range map[string]struct {
		from pipeline.Options
		mod  func(*pipeline.Options)
	}{
		"dmar-no-graph-recall":   {qa, func(o *pipeline.Options) { o.GraphRecall = 0 }},
		"dmar-no-path-relevance": {qa, func(o *pipeline.Options) { o.GraphRelations = "none" }},
		"dmar-no-link-filter":    {qa, func(o *pipeline.Options) { o.Linking = "exact" }},
		"dmar-unmasked":          {qa, func(o *pipeline.Options) { o.GraphRelationQuery = "question" }},
		"dmar-no-own-pages":      {qa, func(o *pipeline.Options) { o.NoOwnPages = true }},
		"dmar-fixed-gate":        {full, func(o *pipeline.Options) { o.Gate = "fixed" }},
		"dmar-evidence-gate":     {full, func(o *pipeline.Options) { o.Gate = "evidence" }},
		"dmar-structure-always":  {full, func(o *pipeline.Options) { o.StructureNeedsChannel = false }},
		"dmar-no-second-stage":   {full, func(o *pipeline.Options) { o.M = 0 }},
		"dmar-no-kg":             {full, func(o *pipeline.Options) { o.Structure = "off" }},
		"dmar-ged":               {full, func(o *pipeline.Options) { o.Structure = "ged" }},
	} {
		want := c.from
		c.mod(&want)
		if !reflect.DeepEqual(*by[name].Options, want) || by[name].Baseline() {
			t.Errorf("%s: %+v, want %+v", name, by[name].Options, want)
		}
	}
	if s := by["kg-walk"]; s.Kind != "kg-walk" || !s.Baseline() || !reflect.DeepEqual(*s.Options, qa) {
		t.Errorf("kg-walk does not walk dmar's channel: %+v", s)
	}
	if s := by["dmar-graph"]; s.Kind != "dmar" || s.Options.GraphRecall != graphHops || s.Options.GraphBoost != graphBoost {
		t.Errorf("dmar-graph: %+v", s)
	}
	o := by["dmar-graph-h2-b3-dir-k20-w0.5"].Options
	if o.GraphRecall != 2 || o.GraphBoost != 3 || o.GraphRelations != "directed" || o.GraphRecallK != 20 || o.GraphWeight != 0.5 {
		t.Errorf("variant options %+v", o)
	}
	if o := by["kg-walk-r1-h2-hyb"].Options; o.Stage1 != "hybrid" || o.GraphRoots != 1 || o.GraphRecall != 2 {
		t.Errorf("-hyb variant options %+v", o)
	}
	if !qa.StructureNeedsChannel || qa.Stage1 != "hybrid" || qa.GraphRecall != 2 {
		t.Errorf("dmar's question-aware options %+v: want structure_needs_channel, hybrid stage 1, two hops", qa)
	}
	for _, bad := range []string{"dmar-graph-x", "kg-walk-h", "dmar-graph-h3"} {
		if _, err := Systems([]string{bad}, pipeline.Defaults(), 20, 0.5); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// The -pX graph variants run the pipeline composed with the relation prior
// at weight X (not an option: the options are the variant's without it);
// a weight out of range is refused, naming the system.
func TestPathPriorSystems(t *testing.T) {
	ss, err := Systems([]string{"kg-walk-p2", "dmar-graph-h2-p0.5", "kg-walk-h2"}, pipeline.Defaults(), 20, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{2, 0.5, 0} {
		if ss[i].PathPrior != want {
			t.Errorf("%s: path prior %v, want %v", ss[i].Name, ss[i].PathPrior, want)
		}
	}
	if !reflect.DeepEqual(*ss[0].Options, func() pipeline.Options {
		ss2, _ := Systems([]string{"kg-walk-h1"}, pipeline.Defaults(), 20, 0.5)
		return *ss2[0].Options
	}()) {
		t.Errorf("kg-walk-p2's options differ from its variant's without the prior: %+v", ss[0].Options)
	}
	for _, bad := range []string{"kg-walk-p9", "kg-walk-p-1", "kg-walk-px"} {
		if _, err := Systems([]string{bad}, pipeline.Defaults(), 20, 0.5); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// The systems of ideas measured without a gain and removed (the
// question-conditioned utility, question-ranked reformulation and its caps,
// the anchors' names in Q', the fan-out normaliser) are unknown now: a run
// that names one is refused, naming it.
func TestRemovedSystemsAreUnknown(t *testing.T) {
	for _, name := range []string{"dmar-path", "dmar-graph-path-c0.7", "dmar-qreform", "dmar-paper-sreform-b3", "dmar-full-names2", "dmar-fan0.04", "kg-walk-mask-fan0.02", "dmar-util0.25"} {
		if _, err := Systems([]string{name}, pipeline.Defaults(), 20, 0.5); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an unknown system named", name, err)
		}
	}
}

// The named variants are dmar with one setting changed: dmar-linksN
// (title_links N), dmar-kgrankW[-kK] (the KG channel's order fused at
// weight W and constant K, compared with dmar); a malformed or out-of-range
// name is refused, naming it.
func TestNamedVariants(t *testing.T) {
	for _, c := range []struct {
		names []string
		from  string // the system each is compared with
		set   []func(*pipeline.Options)
		bad   []string
	}{
		{[]string{"dmar-links0", "dmar-links3"}, "",
			[]func(*pipeline.Options){func(o *pipeline.Options) { o.TitleLinks = 0 }, func(o *pipeline.Options) { o.TitleLinks = 3 }},
			[]string{"dmar-links", "dmar-links11", "dmar-links-1", "dmar-linksx"}},
		{[]string{"dmar-kgrank0.8", "dmar-kgrank1-k3"}, "dmar",
			[]func(*pipeline.Options){
				func(o *pipeline.Options) { o.KGRank, o.KGRankK = 0.8, pipeline.DefaultKGRankK },
				func(o *pipeline.Options) { o.KGRank, o.KGRankK = 1, 3 }},
			[]string{"dmar-kgrank", "dmar-kgrankx", "dmar-kgrank1-k", "dmar-kgrank-1", "dmar-kgrank11", "dmar-kgrank1-k0"}},
	} {
		ss, err := Systems(c.names, pipeline.Defaults(), 20, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		o := pipeline.Defaults()
		o.K, o.P = 20, 20
		for i, set := range c.set {
			want := o.QuestionAware()
			set(&want)
			if ss[i].Kind != "dmar" || ss[i].From != c.from || !reflect.DeepEqual(*ss[i].Options, want) {
				t.Errorf("%s: %+v (from %q), want %+v", ss[i].Name, ss[i].Options, ss[i].From, want)
			}
		}
		for _, bad := range c.bad {
			if _, err := Systems([]string{bad}, pipeline.Defaults(), 20, 0.5); err == nil || !strings.Contains(err.Error(), bad) {
				t.Errorf("%s: %v", bad, err)
			}
		}
	}
}

// --baselines chooses which baselines the best is taken from; the others
// are compared like DMAR's systems, and a name that is no baseline of the
// run is refused.
func TestRestrictBaselines(t *testing.T) {
	sys, err := Systems([]string{"bm25", "dense", "hybrid", "kg-walk", "dmar"}, pipeline.Defaults(), 20, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if err := RestrictBaselines(sys, "dense,hybrid"); err != nil {
		t.Fatal(err)
	}
	var base []string
	for _, s := range sys {
		if s.Baseline() {
			base = append(base, s.Name)
		}
	}
	if !reflect.DeepEqual(base, []string{"dense", "hybrid"}) {
		t.Fatalf("baselines %v", base)
	}
	for _, bad := range []string{"dmar", "ppr", "dense,bm2"} {
		fresh, _ := Systems([]string{"bm25", "dense", "dmar"}, pipeline.Defaults(), 20, 0.5)
		if err := RestrictBaselines(fresh, bad); err == nil {
			t.Errorf("--baselines %q accepted", bad)
		}
	}
}
