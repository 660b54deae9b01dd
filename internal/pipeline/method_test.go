package pipeline_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// Paper undoes every option QuestionAware sets and keeps the others, so a
// request that names method paper on a dmar server runs DMAR-SPEC.md's
// method at the server's sizes.
func TestPaperUndoesQuestionAware(t *testing.T) {
	o := pipeline.Defaults()
	o.N, o.K, o.P, o.Hops, o.Samples, o.Reformulator = 40, 7, 30, 2, 9, "none"
	qa := o.QuestionAware()
	if reflect.DeepEqual(qa, o) {
		t.Fatal("QuestionAware changed nothing")
	}
	if qa.Method != pipeline.MethodDMAR || o.Method != pipeline.MethodPaper {
		t.Errorf("methods %q and %q, want dmar and paper", qa.Method, o.Method)
	}
	if back := qa.Paper(); !reflect.DeepEqual(back, o) {
		t.Errorf("QuestionAware().Paper() =\n%+v\nwant\n%+v", back, o)
	}
	if qa.N != 40 || qa.K != 7 || qa.Hops != 2 || qa.Reformulator != "none" {
		t.Errorf("QuestionAware changed an option it does not own: %+v", qa)
	}
}

func TestWithMethod(t *testing.T) {
	d := pipeline.Defaults()
	for _, c := range []struct {
		name        string
		graphRecall int
		linking     string
	}{{"dmar", 2, "context"}, {"paper", 0, ""}} {
		o, err := d.QuestionAware().WithMethod(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if o.Method != c.name || o.GraphRecall != c.graphRecall || o.Linking != c.linking {
			t.Errorf("%s: method %q graph_recall %d linking %q", c.name, o.Method, o.GraphRecall, o.Linking)
		}
		if err := o.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	_, err := d.WithMethod("question-aware")
	var e *errs.Error
	if !errors.As(err, &e) || e.Field != "method" {
		t.Fatalf("unknown method: %v, want an error naming method", err)
	}
	o := d
	o.Method = "graph"
	if err := o.Validate(); !errors.As(err, &e) || e.Field != "method" {
		t.Errorf("Validate of method %q: %v", o.Method, err)
	}
}
