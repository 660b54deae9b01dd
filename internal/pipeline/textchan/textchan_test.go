package textchan_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/pipeline/textchan"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
	"github.com/dmar-kg/dmar/internal/textgraph"
)

// docs is an in-memory Documents.
type docs map[string]retrieval.Document

func (d docs) Documents(_ context.Context, ids []string) ([]retrieval.Document, error) {
	var out []retrieval.Document
	for _, id := range ids {
		if x, ok := d[id]; ok {
			out = append(out, x)
		}
	}
	return out, nil
}

// The channel is one of the pipeline's.
var _ pipeline.Channel[textchan.Output] = textchan.Channel{}

// trace records fallbacks by name.
type trace []string

func (t *trace) Fallback(name, _ string) { *t = append(*t, name) }

func (*trace) Add(string, time.Duration) {}

func (t *trace) HasFallback(name string) bool { return slices.Contains(*t, name) }

var corpus = docs{
	"inception":  {ID: "inception", Title: "Inception", Text: "Inception is a film directed by Christopher Nolan, with Leonardo DiCaprio."},
	"nolan":      {ID: "nolan", Title: "Christopher Nolan", Text: "Christopher Nolan is a director born in London. He directed Inception and The Prestige."},
	"prestige":   {ID: "prestige", Title: "The Prestige", Text: "The Prestige is a film about two magicians in Victorian London."},
	"unrelated":  {ID: "unrelated", Title: "Photosynthesis", Text: "Photosynthesis turns light into chemical energy in green plants."},
	"unrelated2": {ID: "unrelated2", Title: "Basalt", Text: "Basalt is a volcanic rock rich in iron and magnesium."},
}

func channel(t *testing.T) textchan.Channel {
	t.Helper()
	m := textgraph.NewMemory()
	var ds []retrieval.Document
	for _, d := range corpus {
		ds = append(ds, d)
	}
	if err := m.Put(context.Background(), textgraph.Builder{Extractor: textgraph.Heuristic{}, Encoder: scoringtest.Words{}, SynonymMin: 0.8}, ds); err != nil {
		t.Fatal(err)
	}
	return textchan.Channel{Store: m, Docs: corpus, Options: textchan.Options{Params: textchan.Defaults(), K: 10}}
}

func query(t *testing.T, text string) chanio.Query {
	t.Helper()
	v, err := scoringtest.Words{}.Encode(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return chanio.Query{Text: text, Vector: v[0]}
}

// The channel runs alone: the passages around the phrases Q names come
// first, ranked 1..n in score order, each with its path and its score over
// the best (1 for the first); passages no seed reaches are not returned;
// a filter keeps only the documents it names.
func TestRun(t *testing.T) {
	c := channel(t)
	var tr trace
	q := query(t, "Which films did Christopher Nolan direct?")
	out, err := c.Run(context.Background(), q, &tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != 0 || len(out.Hits) == 0 {
		t.Fatalf("fallbacks %v, %d hits", tr, len(out.Hits))
	}
	for i, h := range out.Hits {
		th := out.Docs[h.Doc.ID]
		if th.Rank != i+1 || th.Score != h.Score || th.Path == "" || (i > 0 && h.Score > out.Hits[i-1].Score) {
			t.Errorf("hit %d %s: %+v (score %v)", i, h.Doc.ID, th, h.Score)
		}
		if h.Doc.ID == "unrelated" || h.Doc.ID == "unrelated2" {
			t.Errorf("%s was reached: nothing links it to the question", h.Doc.ID)
		}
	}
	if first := out.Docs[out.Hits[0].Doc.ID]; first.Norm != 1 || (out.Hits[0].Doc.ID != "nolan" && out.Hits[0].Doc.ID != "inception") {
		t.Errorf("first %s: %+v", out.Hits[0].Doc.ID, first)
	}
	c.Filter = retrieval.Filter{IDs: []string{"prestige"}}
	only, err := c.Run(context.Background(), q, &tr)
	if err != nil {
		t.Fatal(err)
	}
	if len(only.Hits) != 1 || only.Hits[0].Doc.ID != "prestige" || only.Docs["prestige"].Rank != 1 {
		t.Errorf("filtered to prestige: %+v", only.Hits)
	}
}

type failing struct{ textgraph.Store }

func (failing) Neighbourhood(context.Context, []string, textgraph.Params) (textgraph.Subgraph, error) {
	return textgraph.Subgraph{}, errors.New("store down")
}

// A backend that fails, or no store at all, leaves the channel empty and
// says why in the trace; a done context is the run's error.
func TestRunDegrades(t *testing.T) {
	q := query(t, "Which films did Christopher Nolan direct?")
	o := textchan.Options{Params: textchan.Defaults(), K: 10}
	var tr trace
	if out, err := (textchan.Channel{Docs: corpus, Options: o}).Run(context.Background(), q, &tr); err != nil || len(out.Hits) != 0 || len(tr) != 1 || tr[0] != "text_graph_unavailable" {
		t.Errorf("no store: %v, %+v, fallbacks %v", err, out, tr)
	}
	c := channel(t)
	c.Store = failing{c.Store}
	tr = nil
	if out, err := c.Run(context.Background(), q, &tr); err != nil || len(out.Hits) != 0 || len(tr) != 1 || tr[0] != "text_graph_unavailable" {
		t.Errorf("failing store: %v, %+v, fallbacks %v", err, out, tr)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Run(done, q, &tr); !errors.Is(err, context.Canceled) {
		t.Errorf("done context: %v, want context.Canceled", err)
	}
}
