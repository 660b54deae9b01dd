package neo4jkg_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j/dbtype"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
)

// Tests on codexm-film. This file sorts first so that the database is loaded
// with codexm-film before, and with codexm after, kgtest_test.go's tests.

// rawDriver is a second connection for checking what the store wrote.
func rawDriver(t *testing.T) neo4j.DriverWithContext {
	t.Helper()
	c := envConfig()
	auth := neo4j.NoAuth()
	if c.Password != "" {
		auth = neo4j.BasicAuth("neo4j", c.Password, "")
	}
	d, err := neo4j.NewDriverWithContext(c.URI, auth)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	return d
}

func query(t *testing.T, d neo4j.DriverWithContext, q string, params map[string]any) []*neo4j.Record {
	t.Helper()
	res, err := neo4j.ExecuteQuery(context.Background(), d, q, params, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res.Records
}

// TestSinkResumesFromCheckpoint loads codexm-film, stops half way through the
// triples as a crash would, and loads again from the checkpoint: the rows
// already committed are skipped and the graph ends exact (degrees included).
func TestSinkResumesFromCheckpoint(t *testing.T) {
	s := open(t)
	dbMu.Lock()
	defer dbMu.Unlock()
	ctx := context.Background()
	dir := mustDataset(t, "codexm-film")
	b, err := bundle.Read(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteGraph(ctx); err != nil {
		t.Fatal(err)
	}
	rels := []kg.Relation{}
	for _, r := range b.Relations {
		rels = append(rels, r)
	}
	ckpt := filepath.Join(t.TempDir(), "load.ckpt")
	half := len(b.Triples) / 2
	first, err := s.NewSink(neo4jkg.SinkOptions{Batch: 100, Checkpoint: ckpt})
	if err != nil {
		t.Fatal(err)
	}
	must(t, first.WriteRelations(ctx, rels))
	must(t, first.WriteEntities(ctx, b.Entities))
	must(t, first.WriteTriples(ctx, b.Triples[:half]))
	// No Close: the process "died". A rerun replays the whole input.
	second, err := s.NewSink(neo4jkg.SinkOptions{Batch: 100, Checkpoint: ckpt})
	if err != nil {
		t.Fatal(err)
	}
	must(t, second.WriteRelations(ctx, rels))
	must(t, second.WriteEntities(ctx, b.Entities))
	must(t, second.WriteTriples(ctx, b.Triples))
	must(t, second.Close(ctx))
	if want := len(b.Entities) + half; second.Skipped != want {
		t.Errorf("resumed run skipped %d rows, want %d (the entities and the first half of the triples)", second.Skipped, want)
	}
	if _, err := os.Stat(ckpt); !os.IsNotExist(err) {
		t.Errorf("checkpoint file left after Close: %v", err)
	}
	// A full rerun without checkpoint (idempotence) must change nothing.
	again, err := s.NewSink(neo4jkg.SinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	must(t, again.WriteRelations(ctx, rels))
	must(t, again.WriteTriples(ctx, b.Triples[:50]))
	must(t, again.Close(ctx))
	c, err := s.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c.Entities != len(b.Entities) || c.Statements != len(b.Triples) {
		t.Fatalf("holds %d entities, %d statements; want %d, %d", c.Entities, c.Statements, len(b.Entities), len(b.Triples))
	}
	qids := make([]string, len(b.Entities))
	for i, e := range b.Entities {
		qids[i] = e.QID
	}
	got, err := s.Entities(ctx, qids)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range b.Entities {
		if got[e.QID].Degree != e.Degree {
			t.Errorf("degree of %s = %d, want %d", e.QID, got[e.QID].Degree, e.Degree)
		}
	}
}

// TestBrowserStatementDrawsSubgraphs runs the kg.Inspector statement as
// Browser would and compares its nodes and relationships with Subgraphs.
func TestBrowserStatementDrawsSubgraphs(t *testing.T) {
	s, _ := holding(t, "codexm-film")
	d := rawDriver(t)
	ctx := context.Background()
	roots := []string{"Q25188", "Q25191", "Q30", "Q1860", "Q13417240", "Q173637", "Q999999999"}
	for _, p := range []kg.SubgraphParams{kg.DefaultSubgraphParams(), {Hops: 2, MaxNodes: 64, HubDegree: 40}, {Hops: 1, MaxNodes: 5, HubDegree: 500}} {
		want, err := s.Subgraphs(ctx, roots, p)
		if err != nil {
			t.Fatal(err)
		}
		stmt, params := s.SubgraphStatement(roots, p)
		recs := query(t, d, stmt, params)
		if len(recs) != len(want) {
			t.Fatalf("%+v: statement returned %d roots, Subgraphs %d", p, len(recs), len(want))
		}
		for _, r := range recs {
			root := r.Values[0].(string)
			qidOf := map[string]string{}
			var nodes []string
			for _, n := range r.Values[1].([]any) {
				node := n.(dbtype.Node)
				q := node.Props["qid"].(string)
				qidOf[node.ElementId] = q
				nodes = append(nodes, q)
			}
			var edges []kg.Edge
			for _, x := range r.Values[2].([]any) {
				rel := x.(dbtype.Relationship)
				edges = append(edges, kg.Edge{From: qidOf[rel.StartElementId], To: qidOf[rel.EndElementId], PID: rel.Type, Label: rel.Props["label"].(string)})
			}
			sort.Strings(nodes)
			sort.Slice(edges, func(i, j int) bool {
				a, b := edges[i], edges[j]
				return a.From+a.PID+a.To < b.From+b.PID+b.To
			})
			sg := want[root]
			var wantNodes []string
			for _, n := range sg.Nodes {
				wantNodes = append(wantNodes, n.QID)
			}
			sort.Strings(wantNodes)
			wantEdges := append([]kg.Edge(nil), sg.Edges...)
			sort.Slice(wantEdges, func(i, j int) bool {
				a, b := wantEdges[i], wantEdges[j]
				return a.From+a.PID+a.To < b.From+b.PID+b.To
			})
			if diff := cmp.Diff(wantNodes, nodes); diff != "" {
				t.Errorf("%+v %s nodes (-Subgraphs +statement):\n%s", p, root, diff)
			}
			if diff := cmp.Diff(wantEdges, edges); diff != "" {
				t.Errorf("%+v %s edges (-Subgraphs +statement):\n%s", p, root, diff)
			}
			if len(sg.Edges) == 0 && root == "Q25188" {
				t.Errorf("Inception's subgraph has no edges: the comparison proves nothing")
			}
		}
	}
}

// TestBrowserStatementDrawsPaths runs the kg.Inspector path statement as
// Browser would: one row per named path with exactly its nodes and its
// relationships, in walk order, whichever way the walk crossed each edge;
// an edge the graph does not store draws nothing.
func TestBrowserStatementDrawsPaths(t *testing.T) {
	s, _ := holding(t, "codexm-film")
	d := rawDriver(t)
	ctx := context.Background()
	subs, err := s.Subgraphs(ctx, []string{"Q25188", "Q25191"}, kg.DefaultSubgraphParams())
	if err != nil {
		t.Fatal(err)
	}
	director := kg.Edge{From: "Q25188", PID: "P57", To: "Q25191"} // Inception -[director]-> Nolan
	var other, nolans kg.Edge                                     // another edge of Inception's, one of Nolan's
	for _, e := range subs["Q25188"].Edges {
		if e.From == "Q25188" && e.To != "Q25191" && other.PID == "" {
			other = kg.Edge{From: e.From, PID: e.PID, To: e.To}
		}
	}
	for _, e := range subs["Q25191"].Edges {
		if (e.From == "Q25191" || e.To == "Q25191") && e.From != "Q25188" && e.To != "Q25188" && nolans.PID == "" {
			nolans = kg.Edge{From: e.From, PID: e.PID, To: e.To}
		}
	}
	stored := false
	for _, e := range subs["Q25188"].Edges {
		stored = stored || (kg.Edge{From: e.From, PID: e.PID, To: e.To}) == director
	}
	if !stored || other.PID == "" || nolans.PID == "" {
		t.Fatalf("codexm-film lacks the edges the test draws: director %v, %+v, %+v", stored, other, nolans)
	}
	paths := []kg.Path{
		{Name: "one hop", Edges: []kg.Edge{director}},
		{Name: "two hops, the first walked backwards", Edges: []kg.Edge{director, other}},
		{Name: "nolan's", Edges: []kg.Edge{nolans}},
		{Name: "not stored", Edges: []kg.Edge{{From: "Q25191", PID: "P57", To: "Q25188"}}},
	}
	stmt, params := s.PathStatement(paths)
	recs := query(t, d, stmt, params)
	if len(recs) != len(paths) {
		t.Fatalf("the statement returned %d rows for %d paths", len(recs), len(paths))
	}
	for _, r := range recs {
		name := r.Values[0].(string)
		var want kg.Path
		for _, p := range paths {
			if p.Name == name {
				want = p
			}
		}
		qidOf := map[string]string{}
		var nodes []string
		for _, n := range r.Values[1].([]any) {
			node := n.(dbtype.Node)
			qidOf[node.ElementId] = node.Props["qid"].(string)
			nodes = append(nodes, node.Props["qid"].(string))
		}
		var edges []kg.Edge
		for _, x := range r.Values[2].([]any) {
			rel := x.(dbtype.Relationship)
			edges = append(edges, kg.Edge{From: qidOf[rel.StartElementId], PID: rel.Type, To: qidOf[rel.EndElementId]})
		}
		wantEdges, wantNodes := want.Edges, map[string]bool{}
		for _, e := range want.Edges {
			wantNodes[e.From], wantNodes[e.To] = true, true
		}
		if name == "not stored" {
			wantEdges, wantNodes = nil, map[string]bool{}
		}
		var wantList []string
		for q := range wantNodes {
			wantList = append(wantList, q)
		}
		sort.Strings(wantList)
		sort.Strings(nodes)
		if diff := cmp.Diff(wantEdges, edges); diff != "" {
			t.Errorf("%s: relationships (-path +statement):\n%s", name, diff)
		}
		if diff := cmp.Diff(wantList, nodes); diff != "" {
			t.Errorf("%s: nodes (-path +statement):\n%s", name, diff)
		}
	}
}

func TestDocumentsAndRetrievalRecords(t *testing.T) {
	s, d := filmScratch(t, "MATCH (n) WHERE n.id STARTS WITH 'test-' DETACH DELETE n")
	ctx := context.Background()
	docs := []neo4jkg.DocumentLink{
		{ID: "test-doc-1", Title: "Inception", Entities: []string{"Q25188", "Q25191", "Q999999999"}},
		{ID: "test-doc-2", Title: "Nolan", Entities: []string{"Q25191"}},
	}
	for i := 0; i < 2; i++ { // the second put must add nothing
		if err := s.PutDocuments(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	recs := query(t, d, "MATCH (d:Document)-[m:MENTIONS]->(e:Entity) WHERE d.id STARTS WITH 'test-' RETURN d.id + '>' + e.qid AS x ORDER BY x", nil)
	var got []string
	for _, r := range recs {
		got = append(got, r.Values[0].(string))
	}
	if diff := cmp.Diff([]string{"test-doc-1>Q25188", "test-doc-1>Q25191", "test-doc-2>Q25191"}, got); diff != "" {
		t.Errorf("MENTIONS (-want +got):\n%s", diff)
	}

	at := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC)
	rec := kg.RetrievalRecord{ID: "test-r-1", Query: "who directed inception", Reformulated: "inception director", At: at,
		Anchors: []kg.AnchorRecord{
			{DocID: "test-doc-1", Title: "Inception", Rank: 1, Score: 0.9, Entities: []string{"Q25188"}},
			{DocID: "test-doc-3", Title: "New doc", Rank: 2, Score: 0.5, Entities: []string{"Q25191"}},
		}}
	for i := 0; i < 2; i++ {
		if err := s.RecordRetrieval(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	recs = query(t, d, `MATCH (r:Retrieval {id: $id})-[a:ANCHOR]->(d:Document)-[:MENTIONS]->(e:Entity)
		RETURN r.query, r.reformulated, r.at, a.rank, a.score, d.id, e.qid ORDER BY a.rank, e.qid`, map[string]any{"id": "test-r-1"})
	got = nil
	for _, r := range recs {
		v := r.Values
		if v[0] != rec.Query || v[1] != rec.Reformulated || !v[2].(time.Time).Equal(at) {
			t.Errorf("retrieval properties %v", v[:3])
		}
		got = append(got, fmt.Sprintf("%s>%s@%d:%.1f", v[5], v[6], v[3], v[4]))
	}
	// test-doc-1 already mentioned Q25191 (PutDocuments above).
	if diff := cmp.Diff([]string{"test-doc-1>Q25188@1:0.9", "test-doc-1>Q25191@1:0.9", "test-doc-3>Q25191@2:0.5"}, got); diff != "" {
		t.Errorf("retrieval graph (-want +got):\n%s", diff)
	}
}

func mustDataset(t *testing.T, name string) string {
	t.Helper()
	s, err := datapath.Dataset(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// holdingFilm is holding codexm-film, with a raw driver to change the
// database behind the store's back and the bundle it holds.
// filmScratch is the store holding codexm-film and a driver of its own;
// cleanup, a Cypher statement, deletes what the test wrote when it ends.
func filmScratch(t *testing.T, cleanup string) (*neo4jkg.Store, neo4j.DriverWithContext) {
	t.Helper()
	s, _ := holding(t, "codexm-film")
	d := rawDriver(t)
	t.Cleanup(func() { query(t, d, cleanup, nil) })
	return s, d
}

func holdingFilm(t *testing.T) (*neo4jkg.Store, neo4j.DriverWithContext, *bundle.KG) {
	t.Helper()
	s, dir := holding(t, "codexm-film")
	b, err := bundle.Read(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return s, rawDriver(t), b
}

// TestFillNames: after a bulk import no entity has linking forms; FillNames
// sets them all, once, and linking works again.
func TestFillNames(t *testing.T) {
	s, d, b := holdingFilm(t)
	ctx := context.Background()
	query(t, d, "MATCH (e:Entity) REMOVE e.names", nil)
	if ms, err := s.Link(ctx, "Christopher Nolan"); err != nil || len(ms) != 0 {
		t.Fatalf("Link without names = %v, %v; want no mentions", ms, err)
	}
	n, err := s.FillNames(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(b.Entities) {
		t.Errorf("FillNames set %d entities, want %d", n, len(b.Entities))
	}
	if n, err := s.FillNames(ctx, nil); err != nil || n != 0 {
		t.Errorf("second FillNames = %d, %v; want 0", n, err)
	}
	// Forms written under other rules (an older dmar) are recomputed, and
	// only those.
	query(t, d, "MATCH (e:Entity {qid: 'Q25191'}) SET e.formsVersion = 'forms-0', e.derived = []", nil)
	if n, err := s.FillNames(ctx, nil); err != nil || n != 1 {
		t.Errorf("FillNames after one entity's forms went stale = %d, %v; want 1", n, err)
	}
	recs := query(t, d, "MATCH (e:Entity {qid: 'Q25191'}) RETURN e.formsVersion AS v, size(e.derived) AS n", nil)
	if len(recs) != 1 {
		t.Fatalf("Q25191: %d records", len(recs))
	}
	v, _ := recs[0].Get("v")
	nd, _ := recs[0].Get("n")
	if v != kg.FormsVersion || nd == int64(0) {
		t.Errorf("Q25191 after FillNames: version %v, %v derived forms; want %s and some", v, nd, kg.FormsVersion)
	}
	want := kg.NewDictionary(b.Entities).Link("Christopher Nolan directed Inception")
	got, err := s.Link(ctx, "Christopher Nolan directed Inception")
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("the dictionary links nothing: the test proves nothing")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Link after FillNames (-dictionary +neo4j):\n%s", diff)
	}
}

// TestCountNameTokensInBatches: the batched recount gives every token the
// number of entities whose names hold it, and deletes a token no entity
// holds.
func TestCountNameTokensInBatches(t *testing.T) {
	s, d, b := holdingFilm(t)
	ctx := context.Background()
	query(t, d, "MERGE (k:NameToken {token: 'zzstray'}) SET k.freq = 5, k.stamp = 0", nil)
	query(t, d, "MATCH (k:NameToken {token: 'nolan'}) SET k.freq = 999", nil)
	if err := s.CountNameTokens(ctx); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, e := range b.Entities {
		if slices.Contains(kg.NameTokens(e), "nolan") {
			want++
		}
	}
	recs := query(t, d, "MATCH (k:NameToken) WHERE k.token IN ['zzstray', 'nolan'] RETURN k.token AS token, k.freq AS freq", nil)
	got := map[string]int64{}
	for _, r := range recs {
		tok, _ := r.Get("token")
		f, _ := r.Get("freq")
		got[tok.(string)] = f.(int64)
	}
	if _, ok := got["zzstray"]; ok {
		t.Error("a token no entity holds survived the recount")
	}
	if want == 0 || got["nolan"] != int64(want) {
		t.Errorf("freq of nolan = %d, want %d", got["nolan"], want)
	}
}
