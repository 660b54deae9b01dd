package weaviate

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

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
