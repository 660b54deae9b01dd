package server_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/server"
)

// Unauthenticated requests cannot grow /metrics or the log: label values
// come from a fixed set (an unknown method is "other", an unknown route
// "unmatched") and logged request fields are length-capped.
func TestMetricLabelsAndLogLinesAreBounded(t *testing.T) {
	p, _ := testPipeline(t)
	var logs lockedBuffer
	m := server.NewMetrics()
	h := server.New(server.Config{Pipeline: p, Metrics: m, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	huge := strings.Repeat("Z", 50<<10)
	for i := 0; i < 20; i++ {
		method := "ZZA" + strings.Repeat("A", i) + huge
		req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/healthz", http.NoBody)
		req.Method = method
		req.Header.Set("User-Agent", huge)
		req.Header.Set("X-Request-ID", huge)
		h.ServeHTTP(httptest.NewRecorder(), req)
		req = httptest.NewRequest(http.MethodGet, "http://127.0.0.1/nothing/"+strings.Repeat("p", i)+"?q="+huge, http.NoBody)
		req.Method = method
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	req := httptest.NewRequest("ZZA", "http://127.0.0.1/healthz", http.NoBody)
	h.ServeHTTP(httptest.NewRecorder(), req)

	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/metrics", http.NoBody))
	scrape := w.Body.String()
	if strings.Contains(scrape, "ZZA") || strings.Contains(scrape, "pppp") {
		t.Errorf("/metrics carries a client's method or path (%d bytes)", len(scrape))
	}
	if !strings.Contains(scrape, `method="other"`) {
		t.Errorf("/metrics lacks the folded method label other")
	}
	var series int
	for _, line := range strings.Split(scrape, "\n") {
		if strings.HasPrefix(line, "dmar_http_requests_total{") {
			series++
		}
	}
	if series > 4 {
		t.Errorf("%d request series after 41 hostile requests, want a handful", series)
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if len(line) > 1024 {
			t.Errorf("a %d-byte log line: %.200s…", len(line), line)
		}
	}
}

// echoIndex fails every search with an error quoting the query, as a
// backend's error may.
type echoIndex struct{}

func (echoIndex) Search(_ context.Context, q retrieval.Query) ([]retrieval.Hit, error) {
	return nil, errors.New("backend refused the query " + strings.Repeat(q.Text, 40))
}
func (echoIndex) Documents(context.Context, []string) ([]retrieval.Document, error) { return nil, nil }

// The log line of a 5xx carries its cause, capped.
func TestErrorLogLineIsBounded(t *testing.T) {
	_, g := testPipeline(t)
	p, err := pipeline.New(pipeline.Config{Graph: g, Index: echoIndex{}, Encoder: letterEncoder{}})
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	h := server.New(server.Config{Pipeline: p, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	w := do(t, h, "POST", "/v1/retrieve", `{"query": "`+strings.Repeat("Inception ", 190)+`"}`)
	if w.Code < 500 {
		t.Fatalf("a failing index: %d %.200s", w.Code, w.Body)
	}
	if !strings.Contains(logs.String(), "request failed") {
		t.Fatalf("no error line: %.300s", logs.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if len(line) > 4096 {
			t.Errorf("a %d-byte log line: %.200s…", len(line), line)
		}
	}
}
