package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Options left nil stay out of the body (the server's defaults); a zero
// that was set is sent.
func TestRetrieveRequestOmitsUnset(t *testing.T) {
	b, err := json.Marshal(RetrieveRequest{Query: "q", K: Ptr(3), Lambda: Ptr(0.0), Persist: Ptr(false), Filter: &Filter{IDs: []string{"d"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"query":"q","k":3,"lambda":0,"filter":{"ids":["d"]},"persist":false}`; got != want {
		t.Errorf("body %s, want %s", got, want)
	}
}

func TestClientRequestsAndErrors(t *testing.T) {
	var gotURL, gotAuth, gotType string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotURL, gotAuth, gotType = r.URL.String(), r.Header.Get("Authorization"), r.Header.Get("Content-Type")
		switch r.URL.Path {
		case "/v1/entities/Q42/subgraph":
			w.Write([]byte(`{"root":"Q42","nodes":[{"qid":"Q42","label":"Douglas Adams","hop":0}],"edges":[]}`))
		default:
			w.Header().Set("Retry-After", "5")
			w.Header().Set("X-Request-ID", "rid")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":{"code":"unavailable","message":"neo4j is unavailable"}}`))
		}
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL+"/", nil, WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sg, err := c.Subgraph(ctx, "Q42", &SubgraphParams{Hops: 2, Limit: 10})
	if err != nil || sg.Root != "Q42" || len(sg.Nodes) != 1 || sg.Nodes[0].Label != "Douglas Adams" {
		t.Fatalf("subgraph %+v, %v", sg, err)
	}
	if gotURL != "/v1/entities/Q42/subgraph?hops=2&limit=10" || gotAuth != "Bearer k" || gotType != "" {
		t.Errorf("GET %s, auth %q, content type %q", gotURL, gotAuth, gotType)
	}
	_, err = c.Link(ctx, &LinkRequest{Text: "Adams"})
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *Error", err)
	}
	want := Error{StatusCode: 503, Code: CodeUnavailable, Message: "neo4j is unavailable", RetryAfter: 5 * time.Second, RequestID: "rid"}
	if *e != want || gotType != "application/json" {
		t.Errorf("error %+v, want %+v (content type %q)", *e, want, gotType)
	}
	if e.Error() != "dmar server: 503 unavailable: neo4j is unavailable" {
		t.Errorf("Error() = %q", e.Error())
	}
	srv.Close()
	if _, err := c.Health(ctx); err == nil || errors.As(err, &e) {
		t.Errorf("a closed server: %v, want a transport error", err)
	}
}
