package weaviate

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// nodesServer answers New's calls and node status, whose shard reports
// queue[i] vectors waiting on the i-th status call (the last value after).
func nodesServer(t *testing.T, queue ...int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	cls, err := json.Marshal(classDef(Config{Class: "Docs"}))
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/.well-known/ready":
		case r.URL.Path == "/v1/meta":
			fmt.Fprint(w, `{"version":"1.35.2"}`)
		case r.URL.Path == "/v1/schema/Docs":
			w.Write(cls)
		case strings.HasPrefix(r.URL.Path, "/v1/nodes"):
			i := int(calls.Add(1)) - 1
			q := queue[min(i, len(queue)-1)]
			fmt.Fprintf(w, `{"nodes":[{"name":"node1","status":"HEALTHY","shards":[{"class":"Docs","name":"s1","objectCount":10,"vectorQueueLength":%d,"vectorIndexingStatus":"INDEXING"},{"class":"Other","name":"s2","vectorQueueLength":99}]}]}`, q)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// WaitIndexed polls until the collection's queue is empty (another
// collection's queue does not count), and gives up, naming what was
// queued, when ctx ends.
func TestWaitIndexed(t *testing.T) {
	srv, calls := nodesServer(t, 5, 3, 0)
	s := newFake(t, srv)
	if err := s.WaitIndexed(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("node status asked %d times, want 3 (until the queue was empty)", n)
	}
	srv, _ = nodesServer(t, 7)
	s = newFake(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
	defer cancel()
	if err := s.WaitIndexed(ctx); err == nil || !strings.Contains(err.Error(), "7 queued vectors") {
		t.Errorf("a queue that never empties: %v, want an error naming its 7 queued vectors", err)
	}
}
