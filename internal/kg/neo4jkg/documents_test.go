package neo4jkg_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
)

// TestLiveDocumentLinks: MENTIONS edges follow a document's upserts (edges
// to entities it no longer mentions go) and deletes (the node and its edges
// go), on the real Neo4j.
func TestLiveDocumentLinks(t *testing.T) {
	s, d := filmScratch(t, "MATCH (n:Document) WHERE n.id STARTS WITH 'live-test-' DETACH DELETE n")
	ctx := context.Background()
	mentions := func() []string {
		recs := query(t, d, `MATCH (d:Document) WHERE d.id STARTS WITH 'live-test-'
			OPTIONAL MATCH (d)-[:MENTIONS]->(e:Entity) RETURN d.id + '>' + coalesce(e.qid, '') + ':' + d.title AS x ORDER BY x`, nil)
		var out []string
		for _, r := range recs {
			out = append(out, r.Values[0].(string))
		}
		return out
	}
	must(t, s.ReplaceDocuments(ctx, []neo4jkg.DocumentLink{
		{ID: "live-test-1", Title: "Inception", Entities: []string{"Q25188", "Q25191"}},
		{ID: "live-test-2", Title: "Nolan", Entities: []string{"Q25191"}},
	}))
	if diff := cmp.Diff([]string{"live-test-1>Q25188:Inception", "live-test-1>Q25191:Inception", "live-test-2>Q25191:Nolan"}, mentions()); diff != "" {
		t.Errorf("after the first put (-want +got):\n%s", diff)
	}
	// An update drops Q25191 and adds nothing unknown; a document that
	// mentions nothing any more keeps its node without edges.
	must(t, s.ReplaceDocuments(ctx, []neo4jkg.DocumentLink{
		{ID: "live-test-1", Title: "Inception (2010)", Entities: []string{"Q25188", "Q999999999"}},
		{ID: "live-test-2", Title: "Nolan", Entities: nil},
	}))
	if diff := cmp.Diff([]string{"live-test-1>Q25188:Inception (2010)", "live-test-2>:Nolan"}, mentions()); diff != "" {
		t.Errorf("after the update (-want +got):\n%s", diff)
	}
	must(t, s.DeleteDocuments(ctx, []string{"live-test-1", "live-test-unknown"}))
	if diff := cmp.Diff([]string{"live-test-2>:Nolan"}, mentions()); diff != "" {
		t.Errorf("after the delete (-want +got):\n%s", diff)
	}
}
