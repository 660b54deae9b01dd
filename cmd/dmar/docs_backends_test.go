package main

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// TestDocumentsOnNeo4jAndWeaviate runs dmar serve on the real Neo4j and
// Weaviate: a PUT lands in Weaviate (found by GET and retrieval) with its
// MENTIONS edges in Neo4j; an update moves the edges; a DELETE removes the
// object and the edges.
func TestDocumentsOnNeo4jAndWeaviate(t *testing.T) {
	nuri, wurl, film, run := realBackends(t)
	state := t.TempDir()
	seedState(t, state)
	ctx := context.Background()
	run("load", "neo4j", "--uri", nuri, "--bundle", film)
	graph := "neo4j://" + strings.TrimPrefix(nuri, "bolt://")
	index := "weaviate://" + strings.TrimPrefix(strings.TrimPrefix(wurl, "http://"), "https://") + "/DocsLiveTest"
	if g := os.Getenv("DMAR_WEAVIATE_GRPC"); g != "" {
		index += "?grpc=" + g
	}
	t.Cleanup(func() { // the test's class goes with it
		req, _ := http.NewRequest("DELETE", strings.TrimRight(wurl, "/")+"/v1/schema/DocsLiveTest", http.NoBody)
		doReq(req)
	})
	run("load", "corpus", "--data", film, "--index", index, "--state", state, "--quiet")
	drv, err := neo4j.NewDriverWithContext(nuri, neo4j.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(ctx)
	mentions := func(id string) []string { return mentionsOf(t, drv, id) }
	p := startDmar(t, nil, "--graph", graph, "--index", index, "--state", state)
	put := func(text string) {
		t.Helper()
		r := p.send("PUT", "/v1/documents", `{"documents": [{"id": "live-wv-1", "title": "Plonkster", "text": "`+text+`"}]}`)
		if r.code != 200 {
			t.Fatalf("put: %d %s", r.code, r.body)
		}
	}
	put("Plonkster is a film directed by Christopher Nolan.")
	if got := strings.Join(mentions("live-wv-1"), ","); got != "Q25191" {
		t.Errorf("MENTIONS after the put = %q, want Q25191", got)
	}
	if r := p.get("/v1/documents/live-wv-1"); r.code != 200 || !strings.Contains(r.body, "Plonkster") {
		t.Errorf("get from weaviate: %d %s", r.code, r.body)
	}
	if ids := retrievedIDs(t, p, "Plonkster"); !contains(ids, "live-wv-1") {
		t.Errorf("retrieval on weaviate does not find the new document: %v", ids)
	}
	put("Plonkster is a film shot in London.")
	if got := strings.Join(mentions("live-wv-1"), ","); got != "Q84" {
		t.Errorf("MENTIONS after the update = %q, want Q84 (London) only", got)
	}
	if r := p.send("DELETE", "/v1/documents/live-wv-1", ""); r.code != 200 {
		t.Fatalf("delete: %d %s", r.code, r.body)
	}
	if got := mentions("live-wv-1"); len(got) != 0 {
		t.Errorf("MENTIONS after the delete = %v", got)
	}
	if r := p.get("/v1/documents/live-wv-1"); r.code != 404 {
		t.Errorf("get after the delete: %d %s", r.code, r.body)
	}
}

// mentionsOf are the QIDs a Document node MENTIONS in Neo4j, sorted.
func mentionsOf(t *testing.T, drv neo4j.DriverWithContext, id string) []string {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), drv, "MATCH (:Document {id: $id})-[:MENTIONS]->(e:Entity) RETURN e.qid AS q ORDER BY q",
		map[string]any{"id": id}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res.Records {
		out = append(out, r.Values[0].(string))
	}
	return out
}
