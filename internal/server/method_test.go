package server_test

import (
	"context"
	"encoding/json"
	"errors"
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
			if ans.Options.Method != c.method || ans.Options.GraphRecall != c.graphRecall {
				t.Errorf("answer: method %q graph_recall %d", ans.Options.Method, ans.Options.GraphRecall)
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

// Under the dmar method each result carries the learned ranker's view as
// the spec names it: score and ranker_score (equal without the text
// channel), the ranks where the document was found.
func TestRetrieveRankBreakdownOnTheWire(t *testing.T) {
	router(t)
	x := memindex.New(memindex.DefaultParams())
	if err := x.Put(context.Background(), append([]retrieval.Document(nil), testDocs...)); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Graph: testGraph, Index: x, Encoder: letterEncoder{}, Ranker: cosineRanker{}})
	if err != nil {
		t.Fatal(err)
	}
	w := do(t, server.New(server.Config{Pipeline: p}), "POST", "/v1/retrieve", `{"query": "Which films did Christopher Nolan direct?", "k": 3, "method": "dmar"}`)
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
	}
}
