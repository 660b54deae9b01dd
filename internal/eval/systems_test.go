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
		"dmar-no-own-pages":      {qa, func(o *pipeline.Options) { o.Experiments.NoOwnPages = true }},
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

func TestPathSystems(t *testing.T) {
	ss, err := Systems([]string{"dmar", "dmar-path", "dmar-graph-path", "dmar-path-c0.3", "dmar-graph-path-c0.7"}, pipeline.Defaults(), 20, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]System{}
	for _, s := range ss {
		by[s.Name] = s
	}
	if o := by["dmar"].Options; o.Experiments.Utility != "" {
		t.Errorf("dmar's utility %q, want the paper's", o.Experiments.Utility)
	}
	if o := by["dmar-path"].Options; o.Experiments.Utility != "path" || o.GraphRecall != 0 || o.Experiments.EffectivePathWeight() != pipeline.DefaultPathWeight {
		t.Errorf("dmar-path: %+v", o)
	}
	if o := by["dmar-graph-path"].Options; o.Experiments.Utility != "path" || o.GraphRecall != graphHops || o.GraphBoost != graphBoost {
		t.Errorf("dmar-graph-path: %+v", o)
	}
	if o := by["dmar-path-c0.3"].Options; o.Experiments.PathWeight != 0.3 || o.GraphRecall != 0 {
		t.Errorf("dmar-path-c0.3: %+v", o)
	}
	if o := by["dmar-graph-path-c0.7"].Options; o.Experiments.PathWeight != 0.7 || o.GraphRecall != graphHops {
		t.Errorf("dmar-graph-path-c0.7: %+v", o)
	}
	for _, bad := range []string{"dmar-path-c2", "dmar-path-x", "dmar-path-c"} {
		if _, err := Systems([]string{bad}, pipeline.Defaults(), 20, 0.5); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestReformSystems(t *testing.T) {
	ss, err := Systems([]string{"dmar-qreform", "dmar-paper-qreform-b1-r2", "dmar-sreform-b3", "dmar-paper-sreform"}, pipeline.Defaults(), 20, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	paper := pipeline.Defaults()
	paper.K, paper.P = 20, 20
	want := []pipeline.Options{paper.QuestionAware(), paper, paper.QuestionAware(), paper}
	want[0].Experiments.ReformRank = "question"
	want[1].Experiments.ReformRank, want[1].Experiments.ReformBridges, want[1].Experiments.ReformRelations = "question", 1, 2
	want[2].Experiments.ReformRank, want[2].Experiments.ReformBridges = "shapley", 3
	want[3].Experiments.ReformRank = "shapley"
	for i, s := range ss {
		if s.Kind != "dmar" || !reflect.DeepEqual(*s.Options, want[i]) {
			t.Errorf("%s: %+v, want %+v", s.Name, s.Options, want[i])
		}
	}
	if !strings.Contains(ss[1].Ablates, "at most 1 bridge entities and 2 relations") {
		t.Errorf("ablation text %q", ss[1].Ablates)
	}
	for _, bad := range []string{"dmar-qreform-x3", "dmar-qreform-b", "dmar-qreform-b51", "dmar-xreform"} {
		if _, err := Systems([]string{bad}, pipeline.Defaults(), 20, 0.5); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// dmar-linksN is dmar with title_links N.
func TestLinksSystems(t *testing.T) {
	ss, err := Systems([]string{"dmar-links0", "dmar-links3"}, pipeline.Defaults(), 20, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	o := pipeline.Defaults()
	o.K, o.P = 20, 20
	for i, n := range []int{0, 3} {
		want := o.QuestionAware()
		want.TitleLinks = n
		if ss[i].Kind != "dmar" || !reflect.DeepEqual(*ss[i].Options, want) {
			t.Errorf("%s: %+v, want %+v", ss[i].Name, ss[i].Options, want)
		}
	}
	for _, bad := range []string{"dmar-links", "dmar-links11", "dmar-links-1", "dmar-linksx"} {
		if _, err := Systems([]string{bad}, pipeline.Defaults(), 20, 0.5); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// dmar-full-namesN is dmar-full whose reformulator adds N names of each
// anchor (Experiments.ReformPhrases).
func TestReformNamesSystems(t *testing.T) {
	ss, err := Systems([]string{"dmar-full-names2"}, pipeline.Defaults(), 20, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	o := pipeline.Defaults()
	o.K, o.P = 20, 20
	want := o.QuestionAware().WithPaperStages()
	want.Experiments.ReformPhrases = 2
	if !reflect.DeepEqual(*ss[0].Options, want) {
		t.Errorf("dmar-full-names2: %+v, want %+v", ss[0].Options, want)
	}
	for _, bad := range []string{"dmar-full-names0", "dmar-full-names", "dmar-full-namesx", "dmar-full-names21"} {
		if _, err := Systems([]string{bad}, pipeline.Defaults(), 20, 0.5); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: %v", bad, err)
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
