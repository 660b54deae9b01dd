package kgchan_test

import (
	"math"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/pipeline/kgchan"
)

// Options refuse each value out of range, naming the option by its API
// name; the dmar method's settings pass.
func TestOptionsValidate(t *testing.T) {
	ok := kgchan.Options{Recall: 2, K: 50, Weight: 0.3, Relations: "plain", Roots: 1, Popularity: 0.01, RelationQuery: "masked"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("the dmar method's settings: %v", err)
	}
	for _, c := range []struct {
		set   func(*kgchan.Options)
		field string
	}{
		{func(o *kgchan.Options) { o.Recall = 3 }, "graph_recall"},
		{func(o *kgchan.Options) { o.K = 0 }, "graph_recall_k"},
		{func(o *kgchan.Options) { o.Weight = math.NaN() }, "graph_weight"},
		{func(o *kgchan.Options) { o.Relations = "sideways" }, "graph_relations"},
		{func(o *kgchan.Options) { o.Roots = 11 }, "graph_roots"},
		{func(o *kgchan.Options) { o.Popularity = -0.1 }, "graph_popularity"},
		{func(o *kgchan.Options) { o.Mentions = 2 }, "graph_mentions"},
		{func(o *kgchan.Options) { o.RelationQuery = "both" }, "graph_relation_query"},
	} {
		o := ok
		c.set(&o)
		err := o.Validate()
		e, isErr := errs.As(err)
		if !isErr || e.Field != c.field || errs.CodeOf(err) != errs.Invalid || !strings.HasPrefix(e.Error(), c.field) {
			t.Errorf("%s: %v, want an invalid-field error naming it", c.field, err)
		}
	}
}
