package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/api"
)

// dmar query --server sends the body a local query would decode and prints
// the server's answer (table or JSON); an error answer is a typed error.
func TestQueryServer(t *testing.T) {
	var gotBody map[string]any
	var gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/retrieve" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		gotAuth = r.Header.Get("Authorization")
		raw, _ := io.ReadAll(r.Body)
		gotBody = nil
		_ = json.Unmarshal(raw, &gotBody)
		if _, ok := gotBody["topk"]; ok {
			w.WriteHeader(400)
			w.Write([]byte(`{"error":{"code":"invalid_argument","message":"topk: unknown option","field":"topk"}}`))
			return
		}
		w.Write([]byte(`{"query":"Who directed Inception?","results":[{"id":"d1","title":"Inception","text":"t","rank":1,"score":0.9,
			"breakdown":{"semantic":0.8,"structural":0.5,"z_semantic":1,"z_structural":0.2,"gate":{"semantic":0.6,"structural":0.4},"stage":"second","search_score":1}}],
			"anchors":[],"query_entities":[{"qid":"Q25188","label":"Inception","surface":"Inception","start":13,"end":22}],"query_subgraphs":[],
			"reformulated_query":"Who directed Inception? Nolan","reformulator":"builtin","fallbacks":null,"timings_ms":{"total":12.5},"options":{"k":3}}`))
	}))
	defer srv.Close()
	t.Setenv("DMAR_API_KEY", "sekrit")
	var out, errOut bytes.Buffer
	err := Run(context.Background(), []string{"query", "--server", srv.URL, "-o", "k=3", "-o", "shapley=montecarlo", "Who directed", "Inception?"}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	if gotBody["query"] != "Who directed Inception?" || gotBody["k"] != 3.0 || gotBody["shapley"] != "montecarlo" || gotAuth != "Bearer sekrit" {
		t.Errorf("request %v, auth %q", gotBody, gotAuth)
	}
	for _, want := range []string{"Query:        Who directed Inception?", "Inception (Q25188, \"Inception\")", "[builtin]", "d1", "Timings (ms): total 12.5"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := Run(context.Background(), []string{"query", "--server", srv.URL, "--json", "Who directed Inception?"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var res api.RetrieveResponse
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || len(res.Results) != 1 || res.Results[0].Breakdown.Gate.Semantic != 0.6 || res.Options.K != 3 {
		t.Errorf("--json: %v %+v", err, res)
	}
	err = Run(context.Background(), []string{"query", "--server", srv.URL, "-o", "topk=3", "x"}, &out, &errOut)
	var e *api.Error
	if !errors.As(err, &e) || e.StatusCode != 400 || e.Field != "topk" || !strings.Contains(err.Error(), "topk: unknown option") {
		t.Errorf("unknown option: %v", err)
	}
	if err := Run(context.Background(), []string{"query", "--server", "ftp://x", "q"}, &out, &errOut); !errors.As(err, new(usageError)) {
		t.Errorf("a bad --server URL: %v", err)
	}
}
