package pipeline_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// utility "" and "paper" are the paper's F, whatever path_weight says.
func TestUtilityPaperIsTheDefault(t *testing.T) {
	p := newPipeline(t, nil)
	a, err := p.Retrieve(context.Background(), nolan, p.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	if u := p.Defaults().Experiments.Utility; u != "" {
		t.Fatalf("utility defaults to %q, want the paper's", u)
	}
	o := p.Defaults()
	o.Experiments.Utility, o.Experiments.PathWeight = "paper", 0.9
	b, err := p.Retrieve(context.Background(), nolan, o)
	if err != nil {
		t.Fatal(err)
	}
	a.TimingsMS, b.TimingsMS = nil, nil
	b.Options = a.Options
	if !reflect.DeepEqual(a, b) {
		t.Fatal("utility paper changed the answer")
	}
	if _, ok := a.EntStd["first_nonzero"]; !ok {
		t.Fatalf("no ent spread for the first stage: %v", a.EntStd)
	}
}

// utility path: the documents on question-relevant paths from the query
// entity score apart, ent stays in [0, 1], and the anchors' phi still add up
// to |G_Q| x ent.
func TestUtilityPath(t *testing.T) {
	p := newPipeline(t, nil)
	paper, _, err := p.Candidates(context.Background(), nolan, p.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	o := p.Defaults()
	o.Experiments.Utility, o.Experiments.PathWeight = "path", 1
	path, res, err := p.Candidates(context.Background(), nolan, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.TimingsMS["path_relevance"]; !ok {
		t.Errorf("no path_relevance timing: %v", res.TimingsMS)
	}
	differ := 0
	for i := range path {
		e := path[i].Breakdown.Structural
		if e < 0 || e > 1 {
			t.Fatalf("%s: ent %v outside [0, 1]", path[i].ID, e)
		}
		if e != paper[i].Breakdown.Structural {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("path relevance changed no candidate's ent")
	}
	full, err := p.Retrieve(context.Background(), nolan, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range full.Anchors {
		if len(a.Phi) == 0 {
			t.Fatalf("anchor %s has no phi", a.ID)
		}
		sum := 0.0
		for _, v := range a.Phi {
			sum += v.Phi
		}
		if ent := a.Breakdown.Structural; abs(sum/float64(len(a.Phi))-ent) > 1e-9 {
			t.Errorf("anchor %s: mean phi %v, ent %v (efficiency)", a.ID, sum/float64(len(a.Phi)), ent)
		}
	}
}

func TestUtilityOptionsValidated(t *testing.T) {
	p := newPipeline(t, nil)
	for _, c := range []struct {
		mod   func(*pipeline.Options)
		field string
	}{
		{func(o *pipeline.Options) { o.Experiments.Utility = "question" }, "utility"},
		{func(o *pipeline.Options) { o.Experiments.PathWeight = 1.5 }, "path_weight"},
		{func(o *pipeline.Options) { o.Experiments.PathWeight = -0.1 }, "path_weight"},
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
