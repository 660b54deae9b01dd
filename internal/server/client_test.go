package server_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/server"
)

func newClient(t *testing.T, h http.Handler, opts ...api.Option) *api.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := api.NewClient(srv.URL, srv.Client(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The client's retrieve is the server's: the same documents as the
// pipeline gives for the same options.
func TestClientRetrieve(t *testing.T) {
	p, _ := testPipeline(t)
	c := newClient(t, router(t))
	ctx := context.Background()
	res, err := c.Retrieve(ctx, &api.RetrieveRequest{Query: "Which films did Christopher Nolan direct?", K: api.Ptr(4), Lambda: api.Ptr(0.0),
		Filter: &api.Filter{AnyEntities: []string{"Q25191"}}})
	if err != nil {
		t.Fatal(err)
	}
	o := p.Defaults()
	o.K, o.Lambda, o.Filter.AnyEntities = 4, 0, []string{"Q25191"}
	want, err := p.Retrieve(ctx, "Which films did Christopher Nolan direct?", o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 4 || len(res.Anchors) != 3 || res.Options.K != 4 || res.Options.Lambda != 0 || res.Options.N != o.N ||
		!reflect.DeepEqual(res.Options.Filter.AnyEntities, []string{"Q25191"}) {
		t.Fatalf("got %d results, %d anchors, options %+v", len(res.Results), len(res.Anchors), res.Options)
	}
	for i, d := range want.Results {
		if res.Results[i].ID != d.ID || res.Results[i].Score != d.Score || res.Results[i].Breakdown.Semantic != d.Breakdown.Semantic {
			t.Errorf("result %d: %s %v over HTTP, %s %v in process", i, res.Results[i].ID, res.Results[i].Score, d.ID, d.Score)
		}
	}
	if res.ReformulatedQuery != want.ReformulatedQuery || len(res.QueryEntities) != len(want.QueryEntities) {
		t.Errorf("Q' %q, entities %v; want %q, %v", res.ReformulatedQuery, res.QueryEntities, want.ReformulatedQuery, want.QueryEntities)
	}

	lr, err := c.Link(ctx, &api.LinkRequest{Text: "Inception was directed by Christopher Nolan"})
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Mentions) != 2 || lr.Mentions[0].QID != "Q25188" || lr.Mentions[1].QID != "Q25191" || lr.Mentions[1].Label == "" {
		t.Errorf("link: %+v", lr.Mentions)
	}
	sg, err := c.Subgraph(ctx, "Q25191", &api.SubgraphParams{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if sg.Root != "Q25191" || len(sg.Nodes) != 5 || !sg.Truncated {
		t.Errorf("subgraph root %s, %d nodes, truncated %v; want Q25191, 5, true", sg.Root, len(sg.Nodes), sg.Truncated)
	}
	if h, err := c.Health(ctx); err != nil || h.Status != "ok" {
		t.Errorf("health %+v, %v", h, err)
	}
	if r, err := c.Ready(ctx); err != nil || r.Status != "ready" || r.Checks["graph"] != "ok" {
		t.Errorf("ready %+v, %v", r, err)
	}
}

// A server's error answer is an *api.Error with its status, code, message
// and field.
func TestClientTypedErrors(t *testing.T) {
	c := newClient(t, router(t))
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		call   func() error
		status int
		code   string
		field  string
		msg    string
	}{
		{"k over p", func() error {
			_, err := c.Retrieve(ctx, &api.RetrieveRequest{Query: "x", K: api.Ptr(30), P: api.Ptr(20)})
			return err
		}, 422, api.CodeUnprocessable, "k", "k"},
		{"out of range", func() error {
			_, err := c.Retrieve(ctx, &api.RetrieveRequest{Query: "x", Lambda: api.Ptr(2.0)})
			return err
		}, 400, api.CodeInvalid, "lambda", "between 0 and 1"},
		{"empty query", func() error { _, err := c.Retrieve(ctx, &api.RetrieveRequest{}); return err }, 400, api.CodeInvalid, "query", "empty"},
		{"empty link", func() error { _, err := c.Link(ctx, &api.LinkRequest{Text: " "}); return err }, 400, api.CodeInvalid, "text", "empty"},
		{"bad hops", func() error { _, err := c.Subgraph(ctx, "Q25191", &api.SubgraphParams{Hops: 9}); return err }, 400, api.CodeInvalid, "hops", "between 1 and 3"},
		{"bad qid", func() error { _, err := c.Subgraph(ctx, "Nolan", nil); return err }, 400, api.CodeInvalid, "qid", "item id"},
		{"unknown qid", func() error { _, err := c.Subgraph(ctx, "Q999999999", nil); return err }, 404, api.CodeNotFound, "", "not in the knowledge graph"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var e *api.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T) is not an *api.Error", err, err)
			}
			if e.StatusCode != tc.status || e.Code != tc.code || e.Field != tc.field || !strings.Contains(e.Message, tc.msg) || e.RequestID == "" {
				t.Errorf("error %+v, want %d %s field %q, a message containing %q and a request id", e, tc.status, tc.code, tc.field, tc.msg)
			}
			if !strings.Contains(e.Error(), e.Message) {
				t.Errorf("Error() %q lacks the message", e.Error())
			}
		})
	}
	// An answer that is not an error body (a proxy's page) still gives the status.
	proxy := newClient(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "bad gateway", http.StatusBadGateway)
	}))
	_, err := proxy.Retrieve(ctx, &api.RetrieveRequest{Query: "x"})
	var e *api.Error
	if !errors.As(err, &e) || e.StatusCode != 502 || e.Code != "" || e.Message != "bad gateway" {
		t.Errorf("proxy error: %#v", err)
	}
	// Not ready: the checks come back with an error.
	p, _ := testPipeline(t)
	down := newClient(t, server.New(server.Config{Pipeline: p, Ready: []server.Checker{{Name: "neo4j", Ping: func(context.Context) error { return errors.New("connection refused") }}}}))
	r, err := down.Ready(ctx)
	if !errors.As(err, &e) || e.StatusCode != 503 || e.Code != api.CodeUnavailable || !strings.Contains(e.Message, "connection refused") || e.RetryAfter == 0 ||
		r == nil || r.Checks["neo4j"] != "connection refused" {
		t.Errorf("not ready: %+v, %v", r, err)
	}
}

// WithAPIKey sends the key as a bearer token; without it a keyed server
// answers 401, typed.
func TestClientAPIKey(t *testing.T) {
	p, _ := testPipeline(t)
	const key = "client-test-key-7"
	h := server.New(server.Config{Pipeline: p, APIKeys: []server.APIKey{{Name: "ci", SHA256: hashOf(key)}}})
	var mu sync.Mutex
	var seen []string
	spy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
	ctx := context.Background()
	_, err := newClient(t, spy).Retrieve(ctx, &api.RetrieveRequest{Query: "Who directed Inception?", K: api.Ptr(2)})
	var e *api.Error
	if !errors.As(err, &e) || e.StatusCode != 401 || e.Code != api.CodeUnauthorized {
		t.Fatalf("without a key: %v", err)
	}
	_, err = newClient(t, spy, api.WithAPIKey("wrong")).Link(ctx, &api.LinkRequest{Text: "Nolan"})
	if !errors.As(err, &e) || e.StatusCode != 401 || !strings.Contains(e.Message, "not valid") {
		t.Fatalf("a wrong key: %v", err)
	}
	res, err := newClient(t, spy, api.WithAPIKey(key)).Retrieve(ctx, &api.RetrieveRequest{Query: "Who directed Inception?", K: api.Ptr(2)})
	if err != nil || len(res.Results) != 2 {
		t.Fatalf("with the key: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"", "Bearer wrong", "Bearer " + key}; !reflect.DeepEqual(seen, want) {
		t.Errorf("Authorization headers %q, want %q", seen, want)
	}
}

func TestNewClientURLs(t *testing.T) {
	for in, want := range map[string]string{"127.0.0.1:8080": "http://127.0.0.1:8080", "http://h:1/": "http://h:1", "https://h/base": "https://h/base"} {
		c, err := api.NewClient(in, nil)
		if err != nil || c.Base() != want {
			t.Errorf("NewClient(%q): %v, %v; want %s", in, c, err, want)
		}
	}
	for _, bad := range []string{"ftp://h", "http://", "http://h:x:y"} {
		if _, err := api.NewClient(bad, nil); err == nil {
			t.Errorf("NewClient(%q) accepted", bad)
		}
	}
}
