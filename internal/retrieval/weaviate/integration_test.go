package weaviate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/vec"
	"github.com/google/go-cmp/cmp"
)

// serverURL returns DMAR_WEAVIATE_URL, skipping the test when it is unset
// outside CI and failing it in CI.
func serverURL(t testing.TB) string {
	t.Helper()
	return setting(t, "DMAR_WEAVIATE_URL",
		"DMAR_WEAVIATE_URL unset: run scripts/services.sh start weaviate; export DMAR_WEAVIATE_URL=http://127.0.0.1:8080",
		"DMAR_WEAVIATE_URL is unset in CI: start Weaviate with scripts/services.sh start weaviate")
}

// setting is the environment variable name; where it is unset, the test is
// skipped with skip, or, under CI=true and when inCI is not empty, failed
// with inCI.
func setting(t testing.TB, name, skip, inCI string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if inCI != "" && os.Getenv("CI") == "true" {
			t.Fatal(inCI)
		}
		t.Skip(skip)
	}
	return v
}

// filmStore is a testStore holding films.
func filmStore(t testing.TB) *Store {
	t.Helper()
	s := testStore(t, "")
	if err := s.Put(context.Background(), films); err != nil {
		t.Fatal(err)
	}
	return s
}

// testStore opens a fresh collection with a unique name (dropped after the
// test) on the server of DMAR_WEAVIATE_URL.
func testStore(t testing.TB, tenant string) *Store {
	t.Helper()
	return testStoreClass(t, fmt.Sprintf("DmarTest%d", rand.Int64()), tenant)
}

func testStoreClass(t testing.TB, class, tenant string) *Store {
	t.Helper()
	ctx := context.Background()
	s, err := New(ctx, Config{URL: serverURL(t), Class: class, Tenant: tenant, GRPC: grpcAddr(), APIKey: os.Getenv("DMAR_WEAVIATE_API_KEY"), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Drop(context.Background()); err != nil {
			t.Errorf("drop %s: %v", class, err)
		}
		s.Close()
	})
	return s
}

// grpcAddr is DMAR_WEAVIATE_GRPC (host:port), 127.0.0.1:50051 by default, or
// "" (imports over REST) when it is "off". DMAR_WEAVIATE_API_KEY, when set,
// authenticates testStore's connections.
func grpcAddr() string {
	switch g := os.Getenv("DMAR_WEAVIATE_GRPC"); g {
	case "off":
		return ""
	case "":
		return "127.0.0.1:50051"
	default:
		return g
	}
}

var films = []retrieval.Document{
	{ID: "Q25188", Title: "Inception", Text: "Inception is a 2010 science fiction action film written and directed by Christopher Nolan.", Entities: []string{"Q25191"}, Vector: []float32{1, 0, 0}},
	{ID: "Q25191", Title: "Christopher Nolan", Text: "Christopher Nolan is a British-American film director, producer and screenwriter.", Entities: []string{"Q25188", "Q145"}, Vector: []float32{0.8, 0.6, 0}},
	{ID: "Q166262", Title: "Interstellar", Text: "Interstellar is a 2014 epic science fiction film directed by Christopher Nolan.", Entities: []string{"Q25191"}, Vector: []float32{0.6, 0.8, 0}},
	{ID: "Q145", Title: "United Kingdom", Text: "The United Kingdom is a country in Europe.", Vector: []float32{0, 0, 1}},
	{ID: "Q190525", Title: "Memento", Text: "Memento is a 2000 neo-noir psychological thriller film.", Entities: []string{"Q25191"}, Vector: []float32{0, 1, 0}},
}

func ids(hits []retrieval.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Doc.ID
	}
	return out
}

func TestIntegrationPutCountDocuments(t *testing.T) {
	s := filmStore(t)
	ctx := context.Background()
	if n, err := s.Count(ctx); err != nil || n != len(films) {
		t.Fatalf("Count = %d, %v; want %d", n, err, len(films))
	}
	got, err := s.Documents(ctx, []string{"Q145", "nope", "Q25188"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]retrieval.Document{films[3], films[0]}, got); diff != "" {
		t.Errorf("Documents (-want +got):\n%s", diff)
	}
	// Reload with a changed title: replaced, not duplicated.
	again := append([]retrieval.Document(nil), films...)
	again[0].Title = "Inception (film)"
	if err := s.Put(ctx, again); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Count(ctx); err != nil || n != len(films) {
		t.Fatalf("Count after reload = %d, %v; want %d", n, err, len(films))
	}
	got, err = s.Documents(ctx, []string{"Q25188"})
	if err != nil || len(got) != 1 || got[0].Title != "Inception (film)" {
		t.Fatalf("Documents after reload = %+v, %v", got, err)
	}
}

func TestIntegrationSearch(t *testing.T) {
	s := filmStore(t)
	ctx := context.Background()
	q := []float32{1, 0.1, 0}
	tests := []struct {
		name string
		q    retrieval.Query
		want []string
	}{
		{"bm25", retrieval.Query{Mode: retrieval.BM25, Text: "Christopher Nolan", Limit: 10},
			[]string{"Q25191", "Q166262", "Q25188"}},
		{"bm25 stop words and punctuation", retrieval.Query{Mode: retrieval.BM25, Text: "the INTERSTELLAR?!", Limit: 10},
			[]string{"Q166262"}},
		{"bm25 limit", retrieval.Query{Mode: retrieval.BM25, Text: "film", Limit: 2},
			[]string{"Q190525", "Q25191"}},
		{"bm25 ids filter", retrieval.Query{Mode: retrieval.BM25, Text: "Christopher Nolan", Limit: 10, Filter: retrieval.Filter{IDs: []string{"Q25188", "Q145"}}},
			[]string{"Q25188"}},
		{"bm25 entity filter", retrieval.Query{Mode: retrieval.BM25, Text: "film", Limit: 10, Filter: retrieval.Filter{AnyEntities: []string{"Q145"}}},
			[]string{"Q25191"}},
		{"vector", retrieval.Query{Mode: retrieval.Vector, Vector: q, Limit: 3},
			[]string{"Q25188", "Q25191", "Q166262"}},
		{"vector filter", retrieval.Query{Mode: retrieval.Vector, Vector: q, Limit: 3, Filter: retrieval.Filter{AnyEntities: []string{"Q25191"}}},
			[]string{"Q25188", "Q166262", "Q190525"}},
		{"hybrid alpha 0 is bm25", retrieval.Query{Mode: retrieval.Hybrid, Text: "Christopher Nolan", Alpha: 0, Limit: 10},
			[]string{"Q25191", "Q166262", "Q25188"}},
		{"hybrid alpha 1 is vector", retrieval.Query{Mode: retrieval.Hybrid, Vector: q, Alpha: 1, Limit: 3},
			[]string{"Q25188", "Q25191", "Q166262"}},
		{"hybrid", retrieval.Query{Mode: retrieval.Hybrid, Text: "Interstellar", Vector: []float32{0, 0, 1}, Alpha: 0.5, Limit: 2},
			[]string{"Q145", "Q166262"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := s.Search(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(hits)); diff != "" {
				t.Errorf("hits (-want +got):\n%s", diff)
			}
			for i, h := range hits {
				if i > 0 && (h.Score > hits[i-1].Score || h.Score == hits[i-1].Score && h.Doc.ID < hits[i-1].Doc.ID) {
					t.Errorf("hit %d (%s %v) out of order after %s %v", i, h.Doc.ID, h.Score, hits[i-1].Doc.ID, hits[i-1].Score)
				}
				if h.Doc.Title == "" || h.Doc.Text == "" || h.Explain == "" {
					t.Errorf("hit %d lacks title, text or explanation: %+v", i, h)
				}
				if h.Doc.Vector != nil {
					t.Errorf("hit %d has a vector without WithVectors", i)
				}
			}
		})
	}
}

func TestIntegrationScores(t *testing.T) {
	s := filmStore(t)
	ctx := context.Background()
	q := []float32{1, 1, 0}
	hits, err := s.Search(ctx, retrieval.Query{Mode: retrieval.Vector, Vector: q, Limit: 5, WithVectors: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if want := vec.Cosine64(q, h.Doc.Vector); math.Abs(h.Score-want) > 1e-5 {
			t.Errorf("%s: vector score %v, want cosine similarity %v", h.Doc.ID, h.Score, want)
		}
	}
	// Ties: Q25191 and Q166262 are equally similar to q; the lower id first.
	if got := ids(hits)[:2]; !cmp.Equal(got, []string{"Q166262", "Q25191"}) {
		t.Errorf("tied hits %v, want [Q166262 Q25191]", got)
	}
	for _, fusion := range []retrieval.Fusion{retrieval.RelativeScore, retrieval.RankedFusion} {
		hits, err := s.Search(ctx, retrieval.Query{Mode: retrieval.Hybrid, Text: "Nolan film", Vector: q, Alpha: 0.5, Fusion: fusion, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 5 {
			t.Fatalf("%s: %d hits, want 5", fusion, len(hits))
		}
		// relativeScore: each list's best gets its full weight, so the top
		// score is at most 1; ranked fusion: at most 2 * 0.5/k with
		// Weaviate's k (60, the embedded index's default too).
		top := hits[0].Score
		if fusion == retrieval.RelativeScore && (top <= 0.5 || top > 1+1e-6) {
			t.Errorf("relativeScore top score %v outside (0.5, 1]", top)
		}
		if k := float64(memindex.DefaultRankedFusionK); fusion == retrieval.RankedFusion && (top <= 0 || top > 1.0/k+1e-6) {
			t.Errorf("rankedFusion top score %v outside (0, 1/%v]", top, k)
		}
		if !strings.Contains(hits[0].Explain, "Hybrid") {
			t.Errorf("%s explain %q does not say hybrid", fusion, hits[0].Explain)
		}
	}
}

func TestIntegrationTenants(t *testing.T) {
	class := fmt.Sprintf("DmarTenants%d", rand.Int64())
	a := testStoreClass(t, class, "appA")
	ctx := context.Background()
	b, err := New(ctx, Config{URL: serverURL(t), Class: class, Tenant: "appB", GRPC: grpcAddr(), Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, films[:2]); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, films[2:]); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    *Store
		want []string
	}{{a, []string{"Q25191", "Q25188"}}, {b, []string{"Q166262"}}} {
		hits, err := c.s.Search(ctx, retrieval.Query{Mode: retrieval.BM25, Text: "Christopher Nolan", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(c.want, ids(hits)) {
			t.Errorf("tenant %s: hits %v, want %v", c.s.cfg.Tenant, ids(hits), c.want)
		}
		n, err := c.s.Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{"appA": 2, "appB": 3}[c.s.cfg.Tenant]; n != want {
			t.Errorf("tenant %s: count %d, want %d", c.s.cfg.Tenant, n, want)
		}
	}
	// The same collection without a tenant is refused with a clear message.
	if _, err := New(ctx, Config{URL: serverURL(t), Class: class}); err == nil || !strings.Contains(err.Error(), "multi-tenant") {
		t.Errorf("opening a multi-tenant collection without a tenant: %v", err)
	}
}

func TestIntegrationLoadSkipsBad(t *testing.T) {
	s := testStore(t, "")
	ctx := context.Background()
	docs := append([]retrieval.Document(nil), films...)
	docs = append(docs,
		retrieval.Document{ID: "", Title: "no id"},
		retrieval.Document{ID: "Q9", Title: "wrong dimension", Vector: []float32{1, 2}},
		retrieval.Document{ID: "Q10", Title: "no vector"},
	)
	var out strings.Builder
	st, err := s.Load(ctx, docs, &out)
	if err != nil {
		t.Fatal(err)
	}
	want := LoadStats{Read: 8, Imported: 6, Skipped: 2}
	if st.Read != want.Read || st.Imported != want.Imported || st.Skipped != want.Skipped {
		t.Errorf("Load stats %+v, want %+v", st, want)
	}
	if len(st.Problems) != 2 || !strings.Contains(st.Problems[0], "empty id") || !strings.Contains(st.Problems[1], `"Q9"`) {
		t.Errorf("problems %q", st.Problems)
	}
	// A vector of another dimension than the collection's is refused by
	// Weaviate, which keeps the object anyway: Load must remove it.
	st, err = s.Load(ctx, []retrieval.Document{{ID: "Q11", Title: "two dimensions", Vector: []float32{1, 0}}}, nil)
	if err != nil || st.Imported != 0 || st.Skipped != 1 || !strings.Contains(st.Problems[0], "length 2") {
		t.Errorf("Load of a 2-d vector into a 3-d collection: %+v, %v", st, err)
	}
	if !strings.Contains(out.String(), "8/8 objects") {
		t.Errorf("progress output %q lacks the final count", out.String())
	}
	if n, err := s.Count(ctx); err != nil || n != 6 {
		t.Errorf("Count = %d, %v; want 6", n, err)
	}
}

func TestIntegrationContext(t *testing.T) {
	s := testStore(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Search(ctx, retrieval.Query{Mode: retrieval.BM25, Text: "x", Limit: 1}); err == nil || ctx.Err() == nil {
		t.Fatalf("search with a cancelled context: %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	time.Sleep(time.Millisecond)
	if err := s.Put(ctx, films); err == nil {
		t.Fatal("Put with an expired context succeeded")
	}
}

// TestIntegrationRefusedObjectsRemoved sends Weaviate a batch that checkDoc
// would have stopped: into an empty collection, a 3-d and a 2-d vector.
// Weaviate indexes the batch concurrently, so either may come first; it
// stores the other, fails to index its vector and reports an error;
// importBatch must delete it so that refused means absent.
func TestIntegrationRefusedObjectsRemoved(t *testing.T) {
	s := testStore(t, "")
	ctx := context.Background()
	failed, err := s.importBatch(ctx, []retrieval.Document{films[0], {ID: "Q9", Title: "two dimensions", Vector: []float32{1, 2}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 1 || strings.Contains(failed[0], "removing") {
		t.Fatalf("failed = %q, want one refused (and removed)", failed)
	}
	kept, gone := films[0].ID, "Q9"
	if strings.Contains(failed[0], `"`+kept+`"`) {
		kept, gone = gone, kept
	}
	got, err := s.Documents(ctx, []string{films[0].ID, "Q9"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != kept {
		t.Errorf("Documents = %v, want only %s: the refused %s must be gone", ids2(got), kept, gone)
	}
}

func ids2(ds []retrieval.Document) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

func TestIntegrationOpenURL(t *testing.T) {
	base := strings.Replace(serverURL(t), "http://", "weaviate://", 1)
	ctx := context.Background()
	class := fmt.Sprintf("DmarOpen%d", rand.Int64())
	if _, err := Open(ctx, base+"/"+class); errs.CodeOf(err) != errs.NotFound || !strings.Contains(err.Error(), "load a corpus") {
		t.Fatalf("Open of a missing collection: %v, want not_found", err)
	}
	g := grpcAddr() // the test server's gRPC address, or none
	if g == "" {
		g = "off"
	}
	s, err := OpenOrCreate(ctx, base+"/"+class+"?grpc="+g)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Drop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if err := s.Put(ctx, films); err != nil {
		t.Fatal(err)
	}
	o, err := Open(ctx, base+"/"+class)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := o.Count(ctx); err != nil || n != len(films) {
		t.Fatalf("Count via Open = %d, %v", n, err)
	}
	// Multi-tenant: a missing tenant is not created by Open.
	mt := fmt.Sprintf("DmarOpenMT%d", rand.Int64())
	m, err := OpenOrCreate(ctx, base+"/"+mt+"?tenant=a")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Drop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if _, err := Open(ctx, base+"/"+mt+"?tenant=b"); errs.CodeOf(err) != errs.NotFound {
		t.Errorf("Open of a missing tenant: %v, want not_found", err)
	}
}

// The HNSW build settings of the index URL reach the collection Weaviate
// creates, and a collection created without them has Weaviate's defaults.
func TestIntegrationHNSWSettings(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		ef, m, rq     int
		wantEf, wantM float64
	}{{64, 16, 8, 64, 16}, {0, 0, 0, 128, 32}} {
		cfg := Config{URL: serverURL(t), Class: fmt.Sprintf("DmarHNSW%d", rand.Int64()), GRPC: grpcAddr(), Create: true, EfConstruction: tc.ef, MaxConnections: tc.m, RQ: tc.rq}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		s, err := New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Drop(context.Background()); err != nil {
				t.Error(err)
			}
			s.Close()
		})
		cls, err := s.client.Schema().ClassGetter().WithClassName(cfg.Class).Do(ctx)
		if err != nil {
			t.Fatal(err)
		}
		vc, _ := cls.VectorIndexConfig.(map[string]any)
		if ef, m := vc["efConstruction"], vc["maxConnections"]; ef != tc.wantEf || m != tc.wantM {
			t.Errorf("efConstruction %d, maxConnections %d asked: the collection has %v and %v, want %v and %v", tc.ef, tc.m, ef, m, tc.wantEf, tc.wantM)
		}
		rq, _ := vc["rq"].(map[string]any)
		if on := rq["enabled"] == true; on != (tc.rq == 8) || (on && rq["bits"] != float64(8)) {
			t.Errorf("rq=%d asked: the collection's rq config is %v", tc.rq, vc["rq"])
		}
		// What a search returns is rescored with the full vectors either way:
		// a document's own vector finds it first, at distance 0.
		if err := s.Put(ctx, films); err != nil {
			t.Fatal(err)
		}
		hits, err := s.Search(ctx, retrieval.Query{Mode: retrieval.Vector, Vector: films[2].Vector, Limit: 3})
		if err != nil || len(hits) == 0 || hits[0].Doc.ID != films[2].ID || math.Abs(hits[0].Score-1) > 1e-5 {
			t.Errorf("rq=%d: vector search for %s = %+v, %v; want it first with cosine 1", tc.rq, films[2].ID, hits, err)
		}
	}
}
