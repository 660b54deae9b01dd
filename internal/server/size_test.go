package server_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/server"
)

const heavy = `{"query": "Which films did Christopher Nolan direct?", "hops": 3, "max_nodes": 512, "n": 200, "p": 200, "k": 200, "m": 10, "max_anchor_subgraphs": 50}`

// A response over Config.MaxResponseBytes is not sent: 422 naming the
// options that size it (those above their defaults), the first as field.
func TestResponseSizeIsBounded(t *testing.T) {
	p, _ := testPipeline(t)
	h := server.New(server.Config{Pipeline: p, MaxResponseBytes: 200 << 10})
	if w := do(t, h, "POST", "/v1/retrieve", `{"query": "Which films did Christopher Nolan direct?"}`); w.Code != 200 {
		t.Fatalf("a default request: %d %.300s", w.Code, w.Body)
	}
	w := do(t, h, "POST", "/v1/retrieve", heavy)
	if w.Code != 422 {
		t.Fatalf("a heavy request: %d, %d bytes, want 422", w.Code, w.Body.Len())
	}
	e := errorOf(t, w)
	for _, opt := range []string{"hops=3", "max_nodes=512", "max_anchor_subgraphs=50", "k=200", "m=10", "204800"} {
		if !strings.Contains(e.Message, opt) {
			t.Errorf("422 message %q does not name %s", e.Message, opt)
		}
	}
	if e.Code != "unprocessable" || e.Field != "hops" {
		t.Errorf("422 error %+v, want code unprocessable, field hops", e)
	}
	small := server.New(server.Config{Pipeline: p, MaxResponseBytes: 2 << 10})
	w = do(t, small, "GET", "/v1/entities/Q25191/subgraph?hops=3&limit=512", "")
	if w.Code != 422 || !strings.Contains(errorOf(t, w).Message, "limit=512") {
		t.Errorf("a subgraph over the bound: %d %.300s", w.Code, w.Body)
	}
	// The default bound holds the heavy request too.
	w = do(t, router(t), "POST", "/v1/retrieve", heavy)
	if w.Code == 200 && w.Body.Len() > server.DefaultMaxResponseBytes {
		t.Errorf("default bound: a %d-byte response", w.Body.Len())
	}
}

// A client-supplied value repeated in an error message is cut to 64
// characters and an ellipsis; no error message exceeds 400 and an ellipsis.
func TestEchoedValuesAreCapped(t *testing.T) {
	h := router(t)
	long := strings.Repeat("9", 100_000)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/entities/Q" + long + "/subgraph", ""},
		{"GET", "/v1/entities/X" + long + "/subgraph", ""},
		{"GET", "/v1/entities/Q25191/subgraph?hops=" + long, ""},
		{"GET", "/v1/nothing/" + long, ""},
		{"POST", "/v1/retrieve", `{"query": "q", "` + strings.Repeat("k", 50_000) + `": 1}`},
		{"POST", "/v1/retrieve", `{"query": "q", "stage2": "` + strings.Repeat("v", 50_000) + `"}`},
		{"POST", "/v1/retrieve", `{"query": "q", "filter": {"ids": ["` + strings.Repeat("i", 50_000) + `"], "any_entities": ["` + strings.Repeat("Q", 50_000) + `"]}}`},
	} {
		w := do(t, h, c.method, c.path, c.body)
		if w.Code < 400 {
			t.Errorf("%s %.60s: %d", c.method, c.path, w.Code)
			continue
		}
		e := errorOf(t, w)
		if n := utf8.RuneCountInString(e.Message); n > 401 || strings.Contains(e.Message, strings.Repeat("9", 65)) {
			t.Errorf("%s %.60s %.60s: a %d-character message: %.200s", c.method, c.path, c.body, n, e.Message)
		}
		if len(e.Field) > 70 {
			t.Errorf("%s %.60s: a %d-byte field", c.method, c.path, len(e.Field))
		}
	}
}
