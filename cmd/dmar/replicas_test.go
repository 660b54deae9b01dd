package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// TestReplicasShareDocuments runs two dmar serve processes, each with a
// state folder of its own, over one Neo4j and one Weaviate cluster
// (DMAR_WEAVIATE_CLUSTER, scripts/services.sh start weaviate-cluster): a
// document written through one is fetched through the other with its
// entity links and metadata, found by its retrieval, and has its MENTIONS
// edges in Neo4j; the same document put again through the second is
// unchanged; an update of its text through the second is seen by the first
// with the title and metadata the first wrote; new metadata through the
// second is seen by the first; a delete through the first is gone from the
// second. Writes are at ALL here, so
// that every replica of the collection holds a write when it is
// acknowledged: a search reads one replica per shard, and with the default
// QUORUM a read through another node can precede the write's arrival there
// by milliseconds (docs/operations.md, "Scaling out").
func TestReplicasShareDocuments(t *testing.T) {
	cluster := os.Getenv("DMAR_WEAVIATE_CLUSTER")
	if cluster == "" {
		t.Skip("DMAR_WEAVIATE_CLUSTER unset: scripts/services.sh start weaviate-cluster and export its last line (scripts/test.sh does, in its cluster block)")
	}
	nuri, _, film, run := realBackends(t)
	wc, err := weaviate.ParseURL(cluster)
	if err != nil {
		t.Fatal(err)
	}
	// The same nodes, the test's own collection.
	index := strings.Replace(cluster, "/"+wc.Class, "/ReplicasTest", 1)
	if !strings.Contains(index, "/ReplicasTest") {
		t.Fatalf("cannot name a collection in %q", cluster)
	}
	t.Cleanup(func() {
		req, _ := http.NewRequest("DELETE", wc.URL+"/v1/schema/ReplicasTest", http.NoBody)
		doReq(req)
	})
	cluster3 := []string{"--weaviate-replicas", "3", "--weaviate-write-consistency", "ALL"}
	graph := "neo4j://" + strings.TrimPrefix(nuri, "bolt://")
	ctx := context.Background()
	run("load", "neo4j", "--uri", nuri, "--bundle", film)
	stateA, stateB := t.TempDir(), t.TempDir()
	seedState(t, stateA)
	seedState(t, stateB)
	run(append([]string{"load", "corpus", "--data", film, "--index", index, "--state", stateA, "--quiet"}, cluster3...)...)
	a := startDmar(t, nil, append([]string{"--graph", graph, "--index", index, "--state", stateA}, cluster3...)...)
	b := startDmar(t, nil, append([]string{"--graph", graph, "--index", index, "--state", stateB}, cluster3...)...)

	drv, err := neo4j.NewDriverWithContext(nuri, neo4j.NoAuth())
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close(ctx)
	mentions := func(id string) string { return strings.Join(mentionsOf(t, drv, id), ",") }
	get := func(p *dmarProc, id string) (api.StoredDocument, int) {
		t.Helper()
		r := p.get("/v1/documents/" + id)
		var d api.StoredDocument
		if r.code == 200 {
			if err := json.Unmarshal([]byte(r.body), &d); err != nil {
				t.Fatal(err)
			}
		}
		return d, r.code
	}
	entities := func(d api.StoredDocument) string {
		var q []string
		for _, e := range d.Entities {
			q = append(q, e.QID)
		}
		return strings.Join(q, ",")
	}

	// put answers the counts of PUT /v1/documents.
	put := func(p *dmarProc, text, metadata string) api.PutDocumentsResponse {
		t.Helper()
		r := p.send("PUT", "/v1/documents", `{"documents": [{"id": "replica-1", "title": "Plonkster", "text": "`+text+`", "metadata": `+metadata+`}]}`)
		var res api.PutDocumentsResponse
		if r.code != 200 || json.Unmarshal([]byte(r.body), &res) != nil {
			t.Fatalf("put: %d %s", r.code, r.body)
		}
		return res
	}
	const nolan, london = "Plonkster is a film directed by Christopher Nolan.", "Plonkster is a film shot in London."
	const meta = `{"source":"replica-a","year":2024}`
	put(a, nolan, meta)
	d, code := get(b, "replica-1")
	if code != 200 || d.Title != "Plonkster" || d.Text != nolan || string(d.Metadata) != meta || entities(d) != "Q25191" {
		t.Fatalf("through the other replica: %d %+v (metadata %s, want %s; entities %q, want Q25191)", code, d, d.Metadata, meta, entities(d))
	}
	if res := put(b, nolan, meta); res.Unchanged != 1 {
		t.Errorf("the same document put again through the other replica = %+v, want unchanged", res)
	}
	if got := mentions("replica-1"); got != "Q25191" {
		t.Errorf("MENTIONS after a write through the first replica = %q, want Q25191", got)
	}
	if ids := retrievedIDs(t, b, "Plonkster"); !contains(ids, "replica-1") {
		t.Errorf("retrieval through the other replica does not find the document: %v", ids)
	}
	// The second replica changes the text: the title and metadata the
	// first wrote stay.
	if res := put(b, london, meta); res.Updated != 1 {
		t.Errorf("a new text through the second replica = %+v, want updated", res)
	}
	if d, code := get(a, "replica-1"); code != 200 || d.Title != "Plonkster" || d.Text != london || string(d.Metadata) != meta || entities(d) != "Q84" {
		t.Errorf("the first replica after an update through the second: %d %+v (metadata %s, want %s; entities %q, want Q84)", code, d, d.Metadata, meta, entities(d))
	}
	if got := mentions("replica-1"); got != "Q84" {
		t.Errorf("MENTIONS after the update = %q, want Q84", got)
	}
	put(b, london, `{"source":"replica-b"}`)
	if d, _ := get(a, "replica-1"); string(d.Metadata) != `{"source":"replica-b"}` {
		t.Errorf("the first replica after new metadata through the second: metadata %s", d.Metadata)
	}
	if r := a.send("DELETE", "/v1/documents/replica-1", ""); r.code != 200 {
		t.Fatalf("delete: %d %s", r.code, r.body)
	}
	if _, code := get(b, "replica-1"); code != 404 {
		t.Errorf("the second replica after a delete through the first: %d", code)
	}
	if got := mentions("replica-1"); got != "" {
		t.Errorf("MENTIONS after the delete = %q", got)
	}
}
