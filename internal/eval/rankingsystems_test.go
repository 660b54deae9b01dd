package eval

import (
	"reflect"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

// The masked-relation-query variants change exactly their
// options of dmar (or of its channel alone, kg-walk), and nothing else.
func TestRankingVariants(t *testing.T) {
	qa := pipeline.Defaults()
	qa.K, qa.P = 20, 20
	qa = qa.QuestionAware()
	for name, c := range map[string]struct {
		kind string
		mod  func(*pipeline.Options)
	}{
		"dmar-mask":         {"dmar", func(o *pipeline.Options) { o.GraphRelationQuery = "masked" }},
		"dmar-mask-dir":     {"dmar", func(o *pipeline.Options) { o.GraphRelationQuery, o.GraphRelations = "masked", "directed" }},
		"kg-walk-mask-w0.4": {"kg-walk", func(o *pipeline.Options) { o.GraphRelationQuery, o.GraphWeight = "masked", 0.4 }},
	} {
		ss, err := Systems([]string{name}, pipeline.Defaults(), 20, 0.5)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := qa
		c.mod(&want)
		if s := ss[0]; s.Kind != c.kind || !reflect.DeepEqual(*s.Options, want) || s.Ablates == "" {
			t.Errorf("%s: kind %s, options %+v, want %s %+v", name, s.Kind, *s.Options, c.kind, want)
		}
	}
	for _, bad := range []string{"dmar-fan0.04", "kg-walk-mask-fan0.02", "dmar-mask-up", "dmar-masked", "dmar-mask-w2", "dmar-w0.4", "dmar-util", "dmar-util0.25"} {
		if _, err := Systems([]string{bad}, pipeline.Defaults(), 20, 0.5); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}
