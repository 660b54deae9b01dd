package server_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/server"
)

// blockingGraph holds Link until release is closed.
type blockingGraph struct {
	kg.Graph
	entered chan struct{}
	release chan struct{}
}

func (b blockingGraph) Link(ctx context.Context, text string) ([]kg.Mention, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.Graph.Link(ctx, text)
}

func TestDrain(t *testing.T) {
	_, g := testPipeline(t)
	bg := blockingGraph{Graph: g, entered: make(chan struct{}, 1), release: make(chan struct{})}
	p, err := pipeline.New(pipeline.Config{Graph: bg, Index: memindex.New(memindex.DefaultParams()), Encoder: letterEncoder{}})
	if err != nil {
		t.Fatal(err)
	}
	h := server.New(server.Config{Pipeline: p})
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- send(h, "POST", "/v1/link", `{"text": "Inception"}`, nil) }()
	<-bg.entered
	if h.InFlight() != 1 {
		t.Fatalf("in flight %d, want 1", h.InFlight())
	}
	h.Drain()
	w := send(h, "POST", "/v1/link", `{"text": "Inception"}`, nil)
	if w.Code != 503 || w.Header().Get("Retry-After") == "" {
		t.Errorf("a new request while draining: %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if w := send(h, "GET", "/readyz", "", nil); w.Code != 503 {
		t.Errorf("readyz while draining: %d", w.Code)
	}
	if w := send(h, "GET", "/healthz", "", nil); w.Code != 200 {
		t.Errorf("healthz while draining: %d", w.Code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if err := h.WaitIdle(ctx); err == nil {
		t.Error("WaitIdle returned while a request was in flight")
	}
	cancel()
	close(bg.release)
	if w := <-done; w.Code != 200 {
		t.Errorf("the request in flight: %d %s", w.Code, w.Body)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.WaitIdle(ctx); err != nil {
		t.Errorf("WaitIdle after the last request: %v", err)
	}
}
