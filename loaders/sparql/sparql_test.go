package sparql

import (
	"context"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
)

type nopSink struct{}

func (nopSink) WriteEntities(context.Context, []kg.Entity) error    { return nil }
func (nopSink) WriteTriples(context.Context, []kg.Triple) error     { return nil }
func (nopSink) WriteRelations(context.Context, []kg.Relation) error { return nil }
func (nopSink) Close(context.Context) error                         { return nil }

func TestOptionsRejectUserTextInQueries(t *testing.T) {
	base := Options{Endpoint: "http://127.0.0.1:1/sparql", Seeds: []string{"Q1"}}
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"seed with SPARQL", func(o *Options) { o.Seeds = []string{"Q1 } ?s ?p ?o {"} }, "not a QID"},
		{"seed not an item", func(o *Options) { o.Seeds = []string{"P31"} }, "not a QID"},
		{"property", func(o *Options) { o.Properties = []string{"P31>"} }, "not a PID"},
		{"language", func(o *Options) { o.Lang = `en") || true || ("` }, "not a language tag"},
		{"no seeds", func(o *Options) { o.Seeds = nil }, "no seeds"},
		{"endpoint", func(o *Options) { o.Endpoint = "file:///etc/passwd" }, "not an http(s) URL"},
		{"hops", func(o *Options) { o.Hops = -1 }, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.edit(&o)
			_, err := Load(context.Background(), nopSink{}, o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestPreparedQueries(t *testing.T) {
	q, err := bank.Prepare("out-edges", params{QIDs: []string{"Q22", "Q31"}, PIDs: []string{"P31"}, Limit: 10, Offset: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"VALUES ?s { wd:Q22 wd:Q31 }", "VALUES ?p { wdt:P31 }", "LIMIT 10 OFFSET 20", "PREFIX wdt: <http://www.wikidata.org/prop/direct/>"} {
		if !strings.Contains(q, want) {
			t.Errorf("out-edges query lacks %q:\n%s", want, q)
		}
	}
	q, err = bank.Prepare("labels", params{IDs: []string{"Q22", "P31"}, Lang: "de", Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(q, "VALUES ?s { wd:Q22 wd:P31 }") || !strings.Contains(q, `LANG(?text) = "de"`) {
		t.Errorf("labels query:\n%s", q)
	}
}

// abortSink records whether a load closed or aborted it.
type abortSink struct {
	nopSink
	closed, aborted bool
}

func (s *abortSink) Close(context.Context) error { s.closed = true; return nil }
func (s *abortSink) Abort() error                { s.aborted = true; return nil }

// A failed load must abort a sink that can be aborted (a file sink keeps the
// previous run's output), never close it: closing would publish a partial graph.
func TestFailedLoadAbortsTheSink(t *testing.T) {
	s := &abortSink{}
	// Nothing listens on port 1: the first query fails.
	_, err := Load(context.Background(), s, Options{Endpoint: "http://127.0.0.1:1/sparql", Seeds: []string{"Q1"}})
	if err == nil {
		t.Fatal("load from a closed port succeeded")
	}
	if s.closed || !s.aborted {
		t.Fatalf("closed=%v aborted=%v, want the sink aborted and not closed", s.closed, s.aborted)
	}
}
