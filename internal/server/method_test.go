package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/server"
)

// A request's method starts its options over from that method before the
// options it names beside it apply, whatever the server's default method.
func TestDecodeMethod(t *testing.T) {
	dmar := pipeline.Defaults().QuestionAware()
	dmar.K = 7 // a server's own size survives a method change
	for _, c := range []struct {
		name, body  string
		defaults    pipeline.Options
		method      string
		graphRecall int
		stage1      string
	}{
		{"server default dmar", `{"query": "q"}`, dmar, "dmar", 2, "hybrid"},
		{"paper on a dmar server", `{"query": "q", "method": "paper"}`, dmar, "paper", 0, "bm25"},
		{"an option beside the method wins", `{"query": "q", "method": "paper", "graph_recall": 1}`, dmar, "paper", 1, "bm25"},
		{"order does not matter", `{"stage1": "hybrid", "method": "paper", "query": "q"}`, dmar, "paper", 0, "hybrid"},
		{"dmar on a paper server", `{"query": "q", "method": "dmar"}`, pipeline.Defaults(), "dmar", 2, "hybrid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, err := server.DecodeRetrieve(strings.NewReader(c.body), c.defaults)
			if err != nil {
				t.Fatal(err)
			}
			o := in.Options
			if o.Method != c.method || o.GraphRecall != c.graphRecall || o.Stage1 != c.stage1 {
				t.Errorf("method %q graph_recall %d stage1 %q, want %q %d %q", o.Method, o.GraphRecall, o.Stage1, c.method, c.graphRecall, c.stage1)
			}
			if o.K != c.defaults.K {
				t.Errorf("k %d, want the server's %d", o.K, c.defaults.K)
			}
			ans, err := server.DecodeAnswer(strings.NewReader(c.body), c.defaults)
			if err != nil {
				t.Fatal(err)
			}
			if ans.Method != c.method || ans.GraphRecall != c.graphRecall {
				t.Errorf("answer: method %q graph_recall %d", ans.Method, ans.GraphRecall)
			}
		})
	}
	for _, body := range []string{`{"query": "q", "method": "question-aware"}`, `{"query": "q", "method": 2}`, `{"query": "q", "method": null}`, `{"query": "q", "Method": "paper"}`} {
		_, err := server.DecodeRetrieve(strings.NewReader(body), dmar)
		var e *errs.Error
		if !errors.As(err, &e) || !strings.EqualFold(e.Field, "method") || e.Code != errs.Invalid {
			t.Errorf("%s: %v, want a 400 naming method", body, err)
		}
	}
}

// The response says which method the options started from.
func TestRetrieveEchoesMethod(t *testing.T) {
	h := router(t)
	for _, m := range []string{"paper", "dmar"} {
		w := do(t, h, "POST", "/v1/retrieve", `{"query": "Who directed Inception?", "k": 3, "method": "`+m+`"}`)
		if w.Code != 200 {
			t.Fatalf("%s: status %d: %s", m, w.Code, w.Body)
		}
		var res api.RetrieveResponse
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if res.Options.Method != m || (m == "dmar") != (res.Options.GraphRecall == 2) {
			t.Errorf("%s: options %+v", m, res.Options)
		}
	}
}

// cosineRanker is a test double for the learned ranker: the cosine orders.
type cosineRanker struct{}

func (cosineRanker) Version() string { return "test-cosine" }
func (cosineRanker) Scores(ctx context.Context, in []scoring.RankInput) ([]float64, error) {
	out := make([]float64, len(in))
	for i, x := range in {
		out[i] = x.Semantic
	}
	return out, ctx.Err()
}

// ownRanker puts the pages of the entities the query names first, then
// the graph channel's documents, then by the cosine: Nolan's page, which
// names his films, leads them.
type ownRanker struct{}

func (ownRanker) Version() string { return "test-own" }
func (ownRanker) Scores(ctx context.Context, in []scoring.RankInput) ([]float64, error) {
	out := make([]float64, len(in))
	for i, x := range in {
		out[i] = 10*x.Own + x.Semantic
		if x.Reached {
			out[i] += 5
		}
	}
	return out, ctx.Err()
}

// rankerServer serves codexm-film's graph and documents (router's) with
// ranker as the learned final ranking.
func rankerServer(t *testing.T, ranker scoring.Ranker) http.Handler {
	t.Helper()
	router(t)
	x := memindex.New(memindex.DefaultParams())
	if err := x.Put(context.Background(), append([]retrieval.Document(nil), testDocs...)); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Graph: testGraph, Index: x, Encoder: letterEncoder{}, Ranker: ranker})
	if err != nil {
		t.Fatal(err)
	}
	return server.New(server.Config{Pipeline: p})
}

// Under the dmar method each result carries the learned ranker's view as
// the spec names it: score and ranker_score (equal without the text
// channel), the ranks where the document was found.
func TestRetrieveRankBreakdownOnTheWire(t *testing.T) {
	w := do(t, rankerServer(t, cosineRanker{}), "POST", "/v1/retrieve", `{"query": "Which films did Christopher Nolan direct?", "k": 3, "method": "dmar", "title_links": 0}`)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var res struct {
		Results []struct {
			ID        string `json:"id"`
			Breakdown struct {
				Ranker map[string]any `json:"ranker"`
			} `json:"breakdown"`
		} `json:"results"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Results) == 0 {
		t.Fatal("no results")
	}
	for _, r := range res.Results {
		rb := r.Breakdown.Ranker
		s, ok1 := rb["score"].(float64)
		rs, ok2 := rb["ranker_score"].(float64)
		if !ok1 || !ok2 || s != rs {
			t.Fatalf("%s: ranker breakdown %v, want score and ranker_score, equal", r.ID, rb)
		}
		if _, ok := rb["text_rank"]; ok {
			t.Fatalf("%s: text_rank without a text channel: %v", r.ID, rb)
		}
		if _, ok := rb["named_by"]; ok {
			t.Fatalf("%s: named_by with title_links 0: %v", r.ID, rb)
		}
	}
}

// Under the dmar method (title_links 2) a page the first result names
// says so on the wire (named_by) and takes the first result's score; the
// options echo title_links; a value out of range is refused by name.
func TestRetrieveNamedByOnTheWire(t *testing.T) {
	h := rankerServer(t, ownRanker{})
	w := do(t, h, "POST", "/v1/retrieve", `{"query": "Which films did Christopher Nolan direct?", "k": 10, "method": "dmar"}`)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var res struct {
		Options struct {
			TitleLinks int `json:"title_links"`
		} `json:"options"`
		Results []struct {
			ID        string  `json:"id"`
			Score     float64 `json:"score"`
			Breakdown struct {
				Ranker struct {
					NamedBy string `json:"named_by"`
				} `json:"ranker"`
			} `json:"breakdown"`
		} `json:"results"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Options.TitleLinks != 2 || len(res.Results) < 2 {
		t.Fatalf("options.title_links %d, %d results: %s", res.Options.TitleLinks, len(res.Results), w.Body)
	}
	first, named := res.Results[0], 0
	for _, r := range res.Results[1:] {
		if nb := r.Breakdown.Ranker.NamedBy; nb != "" {
			named++
			if nb != first.ID || r.Score != first.Score {
				t.Fatalf("%s named by %q with score %v; the first result is %s (%v)", r.ID, nb, r.Score, first.ID, first.Score)
			}
		}
	}
	if named == 0 {
		t.Fatalf("no result named by the first (%s): %s", first.ID, w.Body)
	}
	w = do(t, h, "POST", "/v1/retrieve", `{"query": "Nolan", "title_links": 11}`)
	if w.Code != 400 || !strings.Contains(w.Body.String(), "title_links") {
		t.Fatalf("title_links 11: status %d: %s", w.Code, w.Body)
	}
}
