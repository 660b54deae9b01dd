package pipeline_test

import (
	"context"
	"math"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// graph_relation_query masked: the channel's relation cosines read enc(Q
// without its linked mentions); the default reads enc(Q).
func TestGraphRelationQueryMasked(t *testing.T) {
	p := newPipeline(t, nil)
	o := p.Defaults()
	o.GraphRecall, o.K, o.P = 1, 10, 20
	enc := func(s string) []float32 {
		v, err := hashEncoder{}.Encode(context.Background(), []string{s})
		if err != nil {
			t.Fatal(err)
		}
		return v[0]
	}
	check := func(o2 string, query string) {
		t.Helper()
		o.GraphRelationQuery = o2
		res := walk(t, p, o)
		if len(res.QueryEntities) != 1 || res.QueryEntities[0].Surface != "Christopher Nolan" {
			t.Fatalf("linked %+v, want Christopher Nolan alone", res.QueryEntities)
		}
		qv, checked := enc(query), 0
		for _, d := range res.Results {
			st := d.Breakdown.Graph.Steps
			if len(st) != 1 {
				continue
			}
			want := pathrel.Cosine(qv, enc(pathrel.Text(st[0].Label, st[0].PID, false)))
			if math.Abs(st[0].Relevance-want) > 1e-9 {
				t.Errorf("%q: %s relevance %v, want cos(enc(%q), relation) %v", o2, d.Breakdown.Graph.Path, st[0].Relevance, query, want)
			}
			checked++
		}
		if checked == 0 {
			t.Fatalf("%q: no one-hop result to check", o2)
		}
	}
	check("", nolan)
	check("question", nolan)
	check("masked", "Which films did direct?")
	o.GraphRelationQuery = "names"
	if _, err := p.GraphWalk(context.Background(), nolan, o); err == nil {
		t.Fatal(`graph_relation_query "names" was accepted`)
	}
}
