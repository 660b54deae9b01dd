package weaviate

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	neturl "net/url"
	"slices"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/retrieval"
	wv "github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate/entities/models"
)

// Metadata is stored as given and read back by id, over gRPC and REST
// alike: nil stays nil (unknown to the index), JSON null and objects come
// back byte for byte; searches do not carry it.
func TestIntegrationMetadataRoundTrip(t *testing.T) {
	s := testStore(t, "")
	ctx := context.Background()
	docs := slices.Clone(films[:3])
	docs[0].Metadata = json.RawMessage(`{"source":"test","n":[1,2]}`)
	docs[1].Metadata = json.RawMessage(`null`)
	if err := s.Put(ctx, docs); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{docs[0].ID: `{"source":"test","n":[1,2]}`, docs[1].ID: `null`, docs[2].ID: ""}
	check := func(s *Store, via string) {
		t.Helper()
		got, err := s.Documents(ctx, []string{docs[0].ID, docs[1].ID, docs[2].ID})
		if err != nil || len(got) != 3 {
			t.Fatalf("%s: documents = %d, %v", via, len(got), err)
		}
		for _, d := range got {
			if string(d.Metadata) != want[d.ID] || (want[d.ID] == "") != (d.Metadata == nil) {
				t.Errorf("%s: %s metadata = %q, want %q", via, d.ID, d.Metadata, want[d.ID])
			}
		}
	}
	check(s, "gRPC")
	rest := *s
	rest.rpc = nil
	check(&rest, "REST")
	hits, err := s.Search(ctx, retrieval.Query{Mode: retrieval.BM25, Text: "Inception Nolan", Limit: 3})
	if err != nil || len(hits) == 0 {
		t.Fatalf("search = %v, %v", hits, err)
	}
	for _, h := range hits {
		if h.Doc.Metadata != nil {
			t.Errorf("search hit %s carries metadata %s", h.Doc.ID, h.Doc.Metadata)
		}
	}
	bad := slices.Clone(films[:1])
	bad[0].Metadata = json.RawMessage(`{"cut`)
	if err := s.Put(ctx, bad); err == nil || !strings.Contains(err.Error(), "metadata") {
		t.Errorf("put of metadata that is not JSON = %v, want an error naming metadata", err)
	}
}

// A collection created before collections had the metadata property gets
// it on open; its objects read back with no metadata (unknown), and new
// writes keep theirs.
func TestIntegrationMetadataMigration(t *testing.T) {
	ctx := context.Background()
	class := fmt.Sprintf("DmarOld%d", rand.Int64())
	cfg := Config{URL: serverURL(t), Class: class, GRPC: grpcAddr(), Create: true}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	u, _ := neturl.Parse(cfg.URL)
	c, err := wv.NewClient(wv.Config{Host: u.Host, Scheme: u.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	def := classDef(cfg)
	def.Properties = slices.DeleteFunc(def.Properties, func(p *models.Property) bool { return p.Name == propMetadata })
	if err := c.Schema().ClassCreator().WithClass(def).Do(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Schema().ClassDeleter().WithClassName(class).Do(context.Background()); err != nil {
			t.Error(err)
		}
	})
	// An object as an older dmar wrote it: no metadata property.
	_, err = c.Data().Creator().WithClassName(class).WithID(string(ObjectID(films[0].ID))).WithVector(films[0].Vector).
		WithProperties(map[string]any{propDocID: films[0].ID, propTitle: films[0].Title, propText: films[0].Text}).Do(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("open a collection without the metadata property: %v", err)
	}
	defer s.Close()
	cls, err := s.client.Schema().ClassGetter().WithClassName(class).Do(ctx)
	if err != nil || !hasProperty(cls, propMetadata) {
		t.Fatalf("after open: property %s added = %v (%v)", propMetadata, err == nil && hasProperty(cls, propMetadata), err)
	}
	// A second open (another replica) finds it there.
	s2, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("open again: %v", err)
	}
	s2.Close()
	doc := films[1]
	doc.Metadata = json.RawMessage(`{"year":2024}`)
	if err := s.Put(ctx, []retrieval.Document{doc}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Documents(ctx, []string{films[0].ID, doc.ID})
	if err != nil || len(got) != 2 {
		t.Fatalf("documents = %+v, %v", got, err)
	}
	if got[0].Title != films[0].Title || got[0].Metadata != nil {
		t.Errorf("the older object = %q metadata %q, want its title and no metadata", got[0].Title, got[0].Metadata)
	}
	if string(got[1].Metadata) != `{"year":2024}` {
		t.Errorf("a new write's metadata = %q", got[1].Metadata)
	}
}
