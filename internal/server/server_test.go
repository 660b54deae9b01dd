package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/corpus/corpustest"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/server"
)

// letterEncoder is a deterministic test double: letter frequencies, normalised.
type letterEncoder struct{}

func (letterEncoder) Dim() int        { return 26 }
func (letterEncoder) Version() string { return "test-letters" }
func (letterEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 26)
		v[0] = 1e-3
		for _, r := range strings.ToLower(t) {
			if r >= 'a' && r <= 'z' {
				v[r-'a']++
			}
		}
		out[i] = v
	}
	return out, ctx.Err()
}

var (
	once        sync.Once
	handler     http.Handler
	testPipe    *pipeline.Pipeline
	testGraph   *memkg.Graph
	testMetrics *server.Metrics
	testDocs    []retrieval.Document
	setupErr    error
)

// testPipeline is the pipeline over codexm-film with the letter encoder,
// built once for all tests.
func testPipeline(t *testing.T) (*pipeline.Pipeline, *memkg.Graph) {
	t.Helper()
	router(t)
	return testPipe, testGraph
}

func router(t *testing.T) http.Handler {
	t.Helper()
	once.Do(func() {
		ctx := context.Background()
		g, dir, err := corpustest.Graph(ctx, "codexm-film")
		if err != nil {
			setupErr = err
			return
		}
		docs, x, err := corpustest.Index(ctx, g, dir, letterEncoder{})
		if err != nil {
			setupErr = err
			return
		}
		m := server.NewMetrics()
		p, err := pipeline.New(pipeline.Config{Graph: g, Index: x, Encoder: letterEncoder{}, Metrics: m})
		if err != nil {
			setupErr = err
			return
		}
		testPipe, testGraph, testMetrics, testDocs = p, g, m, docs
		handler = server.New(server.Config{Pipeline: p, Metrics: m, Ready: []server.Checker{{Name: "graph", Ping: g.Ping}}})
	})
	if setupErr != nil {
		t.Fatal(setupErr)
	}
	return handler
}

func do(t *testing.T, h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1:8080" // a keyless server answers loopback Hosts only
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func TestRetrieve(t *testing.T) {
	w := do(t, router(t), "POST", "/v1/retrieve", `{"query": "Which films did Christopher Nolan direct?", "k": 4}`)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var res api.RetrieveResponse
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 4 || len(res.Anchors) != 3 || res.ReformulatedQuery == "" || res.Options.K != 4 {
		t.Errorf("got %d results, %d anchors, Q' %q, k %d", len(res.Results), len(res.Anchors), res.ReformulatedQuery, res.Options.K)
	}
}

// An option that was removed is refused with a 400 that names it and says
// it was removed, on both routes that take options; the response's options
// never show one.
func TestRemovedOptions(t *testing.T) {
	h := router(t)
	w := do(t, h, "POST", "/v1/retrieve", `{"query": "Which films did Christopher Nolan direct?"}`)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	for name := range pipeline.RemovedOptions {
		if strings.Contains(w.Body.String(), `"`+name+`"`) {
			t.Errorf("the response's options show %s", name)
		}
		body := `{"query": "Which films did Christopher Nolan direct?", "` + name + `": 1}`
		w := do(t, h, "POST", "/v1/retrieve", body)
		if w.Code != 400 {
			t.Fatalf("%s: status %d, want 400: %s", name, w.Code, w.Body)
		}
		var e api.ErrorBody
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Error.Field != name || !strings.Contains(e.Error.Message, name+": was removed") {
			t.Errorf("%s: error %+v, want one naming it as removed", name, e.Error)
		}
		_, err := server.DecodeAnswer(strings.NewReader(body), pipeline.Defaults())
		if e, ok := errs.As(err); !ok || e.Field != name || !strings.Contains(e.Message, "was removed") {
			t.Errorf("%s: answer request: %v, want it named as removed", name, err)
		}
	}
}

func TestErrors(t *testing.T) {
	h := router(t)
	long := strings.Repeat("x", 2001)
	cases := []struct {
		name, method, path, body string
		status                   int
		field, contains          string
	}{
		{"malformed JSON", "POST", "/v1/retrieve", `{"query": "x"`, 400, "", "malformed JSON"},
		{"empty body", "POST", "/v1/retrieve", ``, 400, "", "empty"},
		{"second object", "POST", "/v1/retrieve", `{"query": "x"} {}`, 400, "", "data after the JSON object"},
		{"stray brace", "POST", "/v1/retrieve", `{"query": "x"}}`, 400, "", "data after the JSON object"},
		{"stray bracket", "POST", "/v1/link", `{"text": "Nolan"}]`, 400, "", "data after the JSON object"},
		{"unknown option", "POST", "/v1/retrieve", `{"query": "x", "topk": 3}`, 400, "topk", "unknown option"},
		{"wrong type", "POST", "/v1/retrieve", `{"query": "x", "k": "five"}`, 400, "k", "must be int"},
		{"missing query", "POST", "/v1/retrieve", `{"k": 3}`, 400, "query", "empty"},
		{"query too long", "POST", "/v1/retrieve", `{"query": "` + long + `"}`, 413, "query", "2000"},
		{"k over p", "POST", "/v1/retrieve", `{"query": "x", "k": 30, "p": 20}`, 422, "k", "k"},
		{"out of range", "POST", "/v1/retrieve", `{"query": "x", "lambda": 2}`, 400, "lambda", "between 0 and 1"},
		{"bad enum", "POST", "/v1/retrieve", `{"query": "x", "stage2": "bm25"}`, 400, "stage2", "one of"},
		{"body too large", "POST", "/v1/retrieve", `{"query": "` + strings.Repeat("y", 70000) + `"}`, 413, "query", "body over 65536 bytes"},
		{"empty link", "POST", "/v1/link", `{"text": "  "}`, 400, "text", "empty"},
		{"bad qid", "GET", "/v1/entities/Nolan/subgraph", ``, 400, "qid", "item id"},
		{"unknown qid", "GET", "/v1/entities/Q999999999/subgraph", ``, 404, "", "not in the knowledge graph"},
		{"bad hops", "GET", "/v1/entities/Q25191/subgraph?hops=9", ``, 400, "hops", "between 1 and 3"},
		{"no route", "GET", "/v2/nothing", ``, 404, "", "no route"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := do(t, h, c.method, c.path, c.body)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d: %s", w.Code, c.status, w.Body)
			}
			var body api.ErrorBody
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatalf("error body is not {error:{code,message}}: %s", w.Body)
			}
			if body.Error.Code == "" || !strings.Contains(body.Error.Message, c.contains) || body.Error.Field != c.field {
				t.Errorf("error = %+v, want field %q and a message containing %q", body.Error, c.field, c.contains)
			}
		})
	}
}

func TestLinkAndSubgraph(t *testing.T) {
	h := router(t)
	w := do(t, h, "POST", "/v1/link", `{"text": "Inception was directed by Christopher Nolan"}`)
	var lr api.LinkResponse
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &lr) != nil {
		t.Fatalf("link: %d %s", w.Code, w.Body)
	}
	var got []string
	for _, m := range lr.Mentions {
		got = append(got, m.QID)
	}
	if !reflect.DeepEqual(got, []string{"Q25188", "Q25191"}) {
		t.Errorf("link = %v, want [Q25188 Q25191]", got)
	}
	w = do(t, h, "GET", "/v1/entities/Q25191/subgraph?limit=5", "")
	var sg api.Subgraph
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &sg) != nil {
		t.Fatalf("subgraph: %d %s", w.Code, w.Body)
	}
	if sg.Root != "Q25191" || len(sg.Nodes) != 5 || !sg.Truncated {
		t.Errorf("subgraph root %s, %d nodes, truncated %v; want Q25191, 5, true", sg.Root, len(sg.Nodes), sg.Truncated)
	}
}

func TestHealthReadyMetrics(t *testing.T) {
	h := router(t)
	if w := do(t, h, "GET", "/healthz", ""); w.Code != 200 {
		t.Errorf("healthz %d", w.Code)
	}
	if w := do(t, h, "GET", "/readyz", ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"graph":"ok"`) {
		t.Errorf("readyz %d %s", w.Code, w.Body)
	}
	do(t, h, "POST", "/v1/retrieve", `{"query": "Inception"}`)
	w := do(t, h, "GET", "/metrics", "")
	for _, series := range []string{`dmar_http_requests_total{method="POST",route="/v1/retrieve",status="200"}`, `dmar_stage_duration_seconds_bucket{stage="recall"`, "dmar_subgraph_cache_lookups_total"} {
		if !strings.Contains(w.Body.String(), series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
}

func TestNotReady(t *testing.T) {
	p, _ := pipeline.New(pipeline.Config{Graph: memkg.New(nil, nil, nil), Index: memindex.New(memindex.DefaultParams()), Encoder: letterEncoder{}})
	h := server.New(server.Config{Pipeline: p, Ready: []server.Checker{{Name: "neo4j", Ping: func(context.Context) error { return errors.New("connection refused") }}}})
	w := do(t, h, "GET", "/readyz", "")
	if w.Code != 503 || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "connection refused") {
		t.Errorf("readyz with a down backend: %d %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
}

// TestOpenAPIMatchesRoutes checks the document against the real router and
// the real payload types.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(server.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	// Routes: exactly the router's, with {param} for :param.
	p, _ := pipeline.New(pipeline.Config{Graph: memkg.New(nil, nil, nil), Index: memindex.New(memindex.DefaultParams()), Encoder: letterEncoder{}})
	var routes, documented []string
	for _, r := range server.New(server.Config{Pipeline: p}).Routes() {
		if r.Method == http.MethodHead {
			continue // HEAD mirrors every GET; the document's description says so
		}
		path := r.Path
		if i := strings.IndexAny(path, ":*"); i >= 0 {
			end := strings.Index(path[i:], "/")
			if end < 0 { // the parameter ends the path
				end = len(path) - i
			}
			path = path[:i] + "{" + path[i+1:i+end] + "}" + path[i+end:]
		}
		routes = append(routes, strings.ToLower(r.Method)+" "+path)
	}
	for path, ops := range doc.Paths {
		for m := range ops {
			documented = append(documented, m+" "+path)
		}
	}
	sort.Strings(routes)
	sort.Strings(documented)
	if !reflect.DeepEqual(routes, documented) {
		t.Errorf("routes %v\ndocumented %v", routes, documented)
	}
	// Payloads: every schema's properties are exactly the Go type's JSON fields.
	types := map[string]any{
		"RetrieveRequest": api.RetrieveRequest{}, "RetrieveResponse": api.RetrieveResponse{}, "Options": api.Options{},
		"Doc": api.Doc{}, "Anchor": api.Anchor{}, "Breakdown": api.Breakdown{}, "Weights": api.Weights{},
		"Phi": api.Phi{}, "QueryEntity": api.QueryEntity{}, "Fallback": api.Fallback{}, "Statement": api.Statement{},
		"Subgraph": api.Subgraph{}, "Node": api.Node{}, "Edge": api.Edge{}, "LinkRequest": api.LinkRequest{},
		"LinkResponse": api.LinkResponse{}, "ErrorBody": api.ErrorBody{}, "ErrorDetail": api.ErrorDetail{}, "Filter": api.Filter{},
		"AnswerRequest": api.AnswerRequest{}, "AnswerResponse": api.AnswerResponse{}, "AnswerDelta": api.AnswerDelta{},
		"NamedPath": api.NamedPath{}, "GraphPath": api.GraphPath{}, "GraphStep": api.GraphStep{}, "GraphBridge": api.GraphBridge{}, "TextHit": api.TextHit{},
	}
	for name, v := range documentSchemas {
		types[name] = v
	}
	for name, v := range types {
		s, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("schema %s is missing", name)
			continue
		}
		var props []string
		for p := range s.Properties {
			props = append(props, p)
		}
		sort.Strings(props)
		if fields := jsonFields(reflect.TypeOf(v)); !reflect.DeepEqual(fields, props) {
			t.Errorf("schema %s has %v, the Go type has %v", name, props, fields)
		}
	}
	// A real response decodes to documented fields only.
	w := do(t, router(t), "POST", "/v1/retrieve", `{"query": "Inception"}`)
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(w.Body.Bytes(), &raw)
	for k := range raw {
		if _, ok := doc.Components.Schemas["RetrieveResponse"].Properties[k]; !ok {
			t.Errorf("response field %q is not documented", k)
		}
	}
}

// jsonFields lists a struct type's JSON field names: its JSON tags
// (jsonTags) without their options, sorted.
func jsonFields(t reflect.Type) []string {
	tags := jsonTags(t)
	out := make([]string, len(tags))
	for i, tag := range tags {
		out[i], _, _ = strings.Cut(tag, ",")
	}
	return out
}
