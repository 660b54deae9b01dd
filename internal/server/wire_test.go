package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/server"
)

// jsonTags lists a struct type's JSON tags ("name,options"), embedded
// structs flattened, sorted.
func jsonTags(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" {
			out = append(out, jsonTags(f.Type)...)
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		out = append(out, tag)
	}
	sort.Strings(out)
	return out
}

// The wire types that are converted (the rest are the pipeline's own:
// pipeline/result.go) have exactly the JSON fields, with the same options,
// of the pipeline and kg types they are converted from.
func TestWireTypesMatchPipeline(t *testing.T) {
	for _, c := range []struct{ wire, domain any }{
		{api.RetrieveResponse{}, pipeline.Result{}}, {api.Options{}, pipeline.Options{}}, {api.Filter{}, retrieval.Filter{}},
		{api.Subgraph{}, kg.Subgraph{}}, {api.Node{}, kg.Node{}}, {api.Edge{}, kg.Edge{}},
	} {
		w, d := reflect.TypeOf(c.wire), reflect.TypeOf(c.domain)
		if a, b := jsonTags(w), jsonTags(d); !reflect.DeepEqual(a, b) {
			t.Errorf("api.%s has JSON fields %v, %s has %v", w.Name(), a, d, b)
		}
	}
	// The request: the fields the server decodes, each optional for a client.
	if a, b := jsonFields(reflect.TypeOf(api.RetrieveRequest{})), jsonFields(reflect.TypeOf(server.RetrieveInput{})); !reflect.DeepEqual(a, b) {
		t.Errorf("api.RetrieveRequest has %v, the server decodes %v", a, b)
	}
	for _, tag := range jsonTags(reflect.TypeOf(api.RetrieveRequest{})) {
		if tag != "query" && !strings.HasSuffix(tag, ",omitempty") {
			t.Errorf("api.RetrieveRequest field %q is not omitempty: a client would send a zero for an option it left out", tag)
		}
	}
	for code, want := range map[errs.Code]string{errs.Invalid: api.CodeInvalid, errs.Unauthorized: api.CodeUnauthorized, errs.NotFound: api.CodeNotFound,
		errs.TooLarge: api.CodeTooLarge, errs.Unprocessable: api.CodeUnprocessable, errs.RateLimited: api.CodeRateLimited,
		errs.Internal: api.CodeInternal, errs.Unavailable: api.CodeUnavailable} {
		if string(code) != want {
			t.Errorf("errs code %q, api code %q", code, want)
		}
	}
	if api.MaxQueryChars != pipeline.MaxQueryChars {
		t.Errorf("api.MaxQueryChars %d, pipeline.MaxQueryChars %d", api.MaxQueryChars, pipeline.MaxQueryChars)
	}
}

// Converting to the wire types changes no byte of the JSON.
func TestWireBytesIdentical(t *testing.T) {
	p, g := testPipeline(t)
	ctx := context.Background()
	same := func(name string, domain, wire any) {
		t.Helper()
		a, err := json.Marshal(domain)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(wire)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			i := 0
			for i < len(a) && i < len(b) && a[i] == b[i] {
				i++
			}
			t.Errorf("%s: the wire JSON differs at byte %d\npipeline: %.300s\nwire:     %.300s", name, i, a[max(0, i-100):], b[max(0, i-100):])
		}
	}
	for _, body := range []string{
		`{"query": "Which films did Christopher Nolan direct?", "k": 4}`,
		`{"query": "Who starred in The Dark Knight?", "shapley": "montecarlo", "samples": 20, "seed": 7, "stage1": "hybrid"}`,
		`{"query": "Inception", "filter": {"any_entities": ["Q25188"]}, "structure": "off"}`,
		`{"query": "zzzz qqqq", "reformulator": "chat"}`,
		`{"query": "Who is the director of Inception?", "linking": "context", "graph_recall": 2, "graph_roots": 1, "graph_boost": 100}`,
	} {
		in, err := server.DecodeRetrieve(strings.NewReader(body), p.Defaults())
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Retrieve(ctx, in.Query, in.Options)
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		same(body, res, server.ToRetrieveResponse(res))
	}
	// Nil and empty lists, a statement and an id, as the pipeline may leave them.
	sparse := func() *pipeline.Result {
		return &pipeline.Result{Query: "q", Results: []pipeline.Doc{{ID: "e", Breakdown: pipeline.Breakdown{Paths: []pipeline.NamedPath{}}}},
			Anchors:    []pipeline.Anchor{{Doc: pipeline.Doc{ID: "d", Entities: []string{}}}},
			Neo4j:      &pipeline.Statement{Cypher: "MATCH (n) RETURN n", Params: map[string]any{"ids": []string{"Q1"}}},
			Neo4jPaths: &pipeline.Statement{Cypher: "UNWIND $paths AS p RETURN p", Params: map[string]any{"paths": []map[string]any{}}}, RetrievalID: "r1"}
	}
	same("sparse result", sparse(), server.ToRetrieveResponse(sparse()))
	sgs, err := g.Subgraphs(ctx, []string{"Q25191", "Q25188"}, kg.SubgraphParams{Hops: 2, MaxNodes: 7, HubDegree: 500})
	if err != nil {
		t.Fatal(err)
	}
	for qid, sg := range sgs {
		same("subgraph "+qid, sg, server.ToSubgraph(sg))
	}
	// Nodes and edges go out as arrays, never null (the OpenAPI document's promise).
	same("empty subgraph", kg.Subgraph{Root: "Q1", Nodes: []kg.Node{}, Edges: []kg.Edge{}}, server.ToSubgraph(kg.Subgraph{Root: "Q1"}))
}
