package mcp_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dmar-kg/dmar/internal/corpus/corpustest"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	dmcp "github.com/dmar-kg/dmar/internal/mcp"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
	"github.com/dmar-kg/dmar/internal/server"
)

var (
	once sync.Once
	film struct {
		g   *memkg.Graph
		dir string
		err error
	}
	readKey, writeKey = "reader-key", "writer-key"
)

func hash(k string) string { s := sha256.Sum256([]byte(k)); return hex.EncodeToString(s[:]) }

// api is dmar's REST handler over codexm-film with a document store and two
// keys: "reader" (read-only) and "writer". The encoder is a stand-in
// (scoringtest.Words): these tests are about the MCP adapter; the real
// encoder runs in the Python client's test against dmar serve.
func api(t *testing.T, extra ...server.APIKey) *server.Server {
	t.Helper()
	return newAPI(t, true, extra...)
}

// newAPI is api, with /mcp served or not.
func newAPI(t testing.TB, withMCP bool, extra ...server.APIKey) *server.Server {
	t.Helper()
	return newAPIWith(t, setup{noMCP: !withMCP, keys: extra})
}

// setup changes api's server: its configuration, the MCP tools'
// configuration, and the REST handler the tools call (wrap).
type setup struct {
	noMCP  bool
	keys   []server.APIKey
	server func(*server.Config)
	mcp    func(*dmcp.Config)
	wrap   func(http.Handler) http.Handler
}

func newAPIWith(t testing.TB, o setup) *server.Server {
	t.Helper()
	ctx := context.Background()
	once.Do(func() {
		film.g, film.dir, film.err = corpustest.Graph(ctx, "codexm-film")
	})
	if film.err != nil {
		t.Fatal(film.err)
	}
	_, x, err := corpustest.Index(ctx, film.g, film.dir, scoringtest.Words{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := docstore.Open(ctx, docstore.Config{Dir: t.TempDir(), Index: x, Graph: film.g, KGKey: "film", Encoder: scoringtest.Words{}, Replay: true,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := pipeline.New(pipeline.Config{Graph: film.g, Index: x, Encoder: scoringtest.Words{}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.Config{Pipeline: p, Documents: st, Logger: slog.New(slog.DiscardHandler),
		APIKeys: append([]server.APIKey{{Name: "reader", SHA256: hash(readKey)}, {Name: "writer", SHA256: hash(writeKey), Write: true}}, o.keys...),
		MCP: func(h http.Handler) http.Handler {
			if o.noMCP {
				return nil
			}
			c := dmcp.Config{API: h, Spec: server.OpenAPI(), Documents: true, CanWrite: h.(*server.Server).CanWrite}
			if o.wrap != nil {
				c.API = o.wrap(h)
			}
			if o.mcp != nil {
				o.mcp(&c)
			}
			s, err := dmcp.New(c)
			if err != nil {
				t.Error(err)
				return nil
			}
			return s.Handler()
		}}
	if o.server != nil {
		o.server(&cfg)
	}
	return server.New(cfg)
}

// stdio connects a client as dmar mcp serves one, presenting key.
func stdio(t *testing.T, h *server.Server, key string) *mcp.ClientSession {
	t.Helper()
	s, err := dmcp.New(dmcp.Config{API: h, Spec: server.OpenAPI(), Documents: true, CanWrite: h.CanWrite, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.Connect(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type withKey struct{ key string }

func (k withKey) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if k.key != "" {
		r.Header.Set("Authorization", "Bearer "+k.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// overHTTP connects a client to POST /mcp of a listening server.
func overHTTP(t *testing.T, url, key string) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: withKey{key}}, MaxRetries: -1, DisableStandaloneSSE: true}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	text := ""
	if len(res.Content) > 0 {
		text = res.Content[0].(*mcp.TextContent).Text
	}
	return res, text
}

func TestToolsPerKey(t *testing.T) {
	h := api(t)
	read := []string{"get_document", "link", "retrieve", "subgraph"}
	all := []string{"delete_documents", "get_document", "link", "put_documents", "retrieve", "subgraph"}
	if got := toolNames(t, stdio(t, h, readKey)); !slices.Equal(got, read) {
		t.Errorf("read-only key over stdio: %v, want %v", got, read)
	}
	if got := toolNames(t, stdio(t, h, writeKey)); !slices.Equal(got, all) {
		t.Errorf("write key over stdio: %v, want %v", got, all)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	cs, err := overHTTP(t, srv.URL, readKey)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, cs); !slices.Equal(got, read) {
		t.Errorf("read-only key over HTTP: %v, want %v", got, read)
	}
	cs, err = overHTTP(t, srv.URL, writeKey)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, cs); !slices.Equal(got, all) {
		t.Errorf("write key over HTTP: %v, want %v", got, all)
	}
	// No key: the REST API's 401, before any MCP message is read.
	if _, err := overHTTP(t, srv.URL, ""); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("no key over HTTP: %v, want a 401", err)
	}
}

// A read-only caller that calls a write tool anyway is refused with the
// REST API's message, and its session goes on.
func TestWriteRefusedClearly(t *testing.T) {
	h := api(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	cs, err := overHTTP(t, srv.URL, readKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*mcp.ClientSession{stdio(t, h, readKey), cs} {
		res, text := call(t, s, "put_documents", map[string]any{"documents": []any{map[string]any{"id": "n1", "text": "A note."}}})
		if !res.IsError || !strings.Contains(text, "403") || !strings.Contains(text, `API key "reader" is read-only`) {
			t.Errorf("put_documents with a read-only key: error %v, %q", res.IsError, text)
		}
		res, text = call(t, s, "delete_documents", map[string]any{"ids": []string{"Q25188"}})
		if !res.IsError || !strings.Contains(text, "read-only") {
			t.Errorf("delete_documents with a read-only key: error %v, %q", res.IsError, text)
		}
		if res, text := call(t, s, "link", map[string]any{"text": "Inception"}); res.IsError || !strings.Contains(text, "Q25188") {
			t.Errorf("link after a refusal: error %v, %q", res.IsError, text)
		}
	}
	// The write key writes, and the document is found.
	w := stdio(t, h, writeKey)
	if res, text := call(t, w, "put_documents", map[string]any{"documents": []any{map[string]any{"id": "n1", "title": "Zorblax", "text": "Zorblax is a film by Christopher Nolan."}}}); res.IsError || !strings.Contains(text, `"created":1`) {
		t.Fatalf("put_documents with the write key: %v %s", res.IsError, text)
	}
	if res, text := call(t, w, "get_document", map[string]any{"id": "n1"}); res.IsError || !strings.Contains(text, "Zorblax") || !strings.Contains(text, "Q25191") {
		t.Errorf("get_document: %v %s", res.IsError, text)
	}
}

func TestRetrieveAndErrors(t *testing.T) {
	cs := stdio(t, api(t), readKey)
	res, _ := call(t, cs, "retrieve", map[string]any{"query": "Which films did Christopher Nolan direct?", "k": 3})
	var out dmcp.RetrieveOutput
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || res.IsError {
		t.Fatalf("retrieve: %v %s", err, b)
	}
	if len(out.Results) != 3 || out.Results[0].Rank != 1 || out.Results[0].Breakdown["stage"] == nil {
		t.Errorf("retrieve: %d results, first %+v", len(out.Results), out.Results)
	}
	if !slices.ContainsFunc(out.QueryEntities, func(e dmcp.Entity) bool { return e.QID == "Q25191" }) {
		t.Errorf("query entities %+v: want Christopher Nolan (Q25191)", out.QueryEntities)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"retrieve", map[string]any{"query": "   "}, "query: must not be empty"},
		{"retrieve", map[string]any{"query": "Inception", "k": 500}, "k"}, // the bound read from the OpenAPI document
		{"subgraph", map[string]any{"qid": "Q999999999"}, "not in the knowledge graph"},
		{"subgraph", map[string]any{"qid": "Inception"}, "qid"},
		{"get_document", map[string]any{"id": "no-such-doc"}, "404"},
	} {
		res, text := call(t, cs, c.tool, c.args)
		if !res.IsError || !strings.Contains(text, c.want) {
			t.Errorf("%s %v: error %v, %q; want an error naming %q", c.tool, c.args, res.IsError, text, c.want)
		}
	}
	res, text := call(t, cs, "subgraph", map[string]any{"qid": "Q25188", "limit": 1})
	if res.IsError || !strings.Contains(text, `"edges":[]`) {
		t.Errorf("a one-node subgraph: %v %s", res.IsError, text)
	}
}

func TestSchemasFromOpenAPI(t *testing.T) {
	cs := stdio(t, api(t), writeKey)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		b, _ := json.Marshal(tl.InputSchema)
		if tl.Description == "" || tl.OutputSchema == nil {
			t.Errorf("%s: description %q, output schema %v", tl.Name, tl.Description, tl.OutputSchema)
		}
		if tl.Name == "retrieve" && (!strings.Contains(string(b), `"maximum":200`) || !strings.Contains(string(b), "Christopher Nolan")) {
			t.Errorf("retrieve's input schema %s: want k's maximum from the OpenAPI document and an example", b)
		}
	}
}

// Every MCP message is charged to the key's rate limit, once: a tool call
// is not charged again for the REST request it makes.
func TestRateLimitCountsToolCalls(t *testing.T) {
	srv := httptest.NewServer(api(t, server.APIKey{Name: "slow", SHA256: hash("slow-key"), Rate: 0.001, Burst: 5}))
	defer srv.Close()
	cs, err := overHTTP(t, srv.URL, "slow-key") // server/discover: one message
	if err != nil {
		t.Fatal(err)
	}
	toolNames(t, cs) // a second
	for i := range 3 {
		if res, text := call(t, cs, "link", map[string]any{"text": "Inception"}); res.IsError {
			t.Errorf("tool call %d, message %d of a burst of 5: %q", i+1, i+3, text)
		}
	}
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "link", Arguments: map[string]any{"text": "Inception"}})
	if err == nil || !strings.Contains(err.Error(), "Too Many Requests") {
		t.Errorf("a sixth message: %v, want 429", err)
	}
}

// BenchmarkREST times a REST request (POST /v1/link, the cheapest route,
// where any overhead would show) on a server with and without /mcp, both
// with API keys (the rate limiter's /mcp exemption is on the path).
func BenchmarkREST(b *testing.B) {
	body := `{"text": "Inception by Christopher Nolan"}`
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"with-mcp", newAPI(b, true)}, {"without-mcp", newAPI(b, false)}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/v1/link", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+readKey)
				w := httptest.NewRecorder()
				c.h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}
