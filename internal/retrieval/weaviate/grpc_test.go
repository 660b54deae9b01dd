package weaviate

import (
	"context"
	"errors"
	"fmt"
	"github.com/dmar-kg/dmar/internal/retrieval/retrievaltest"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/google/go-cmp/cmp"
)

// pathCorpus is the films and n seeded documents: words of a small
// vocabulary (so that BM25 ties and partial matches abound), 8-d vectors, a
// few linked entities.
func pathCorpus(n int) []retrieval.Document {
	words := strings.Fields("film director nolan actor british war space dream heist city river prize novel song band album league club")
	rng := rand.New(rand.NewPCG(7, 30))
	docs := make([]retrieval.Document, 0, n+len(films))
	for _, f := range films {
		f.Vector = append(append([]float32(nil), f.Vector...), make([]float32, 5)...)
		docs = append(docs, f)
	}
	for i := range n {
		var tw, tt []string
		for range 1 + rng.IntN(3) {
			tw = append(tw, words[rng.IntN(len(words))])
		}
		for range 5 + rng.IntN(25) {
			tt = append(tt, words[rng.IntN(len(words))])
		}
		v := make([]float32, 8)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		d := retrieval.Document{ID: fmt.Sprintf("D%03d", i), Title: strings.Join(tw, " "), Text: strings.Join(tt, " "), Vector: v}
		for range rng.IntN(3) {
			d.Entities = append(d.Entities, fmt.Sprintf("Q%d", 1+rng.IntN(6)))
		}
		docs = append(docs, d)
	}
	return docs
}

// Searches over gRPC answer exactly what GraphQL answers: the same hits in
// the same order, scores, explanations, texts, entities and vectors; and
// Documents and Cosines the same values. The two stores read one collection.
func TestSearchPathsAgree(t *testing.T) {
	for _, tenant := range []string{"", "corpus"} {
		t.Run("tenant="+tenant, func(t *testing.T) {
			rpcStore := testStore(t, tenant)
			if rpcStore.rpc == nil {
				t.Skip("DMAR_WEAVIATE_GRPC=off: no gRPC path to compare")
			}
			ctx := context.Background()
			cfg := rpcStore.Config()
			cfg.GRPC, cfg.Create = "", false
			gql, err := New(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			docs := pathCorpus(300)
			if err := rpcStore.Put(ctx, docs); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(8, 30))
			texts := []string{"nolan film", "war space dream", "the british band album", "prize", "club league river city song", "zzz unknown"}
			var queries []retrieval.Query
			for i, text := range texts {
				v := docs[rng.IntN(len(docs))].Vector
				f := []retrieval.Filter{{}, {AnyEntities: []string{"Q2", "Q5"}}, {IDs: []string{"D001", "D010", "D100", "Q25188", "D299"}}, {IDs: []string{"D001", "D002", "D003"}, AnyEntities: []string{"Q1", "Q3"}}}[i%4]
				for _, limit := range []int{1, 5, 40, 120} {
					queries = append(queries,
						retrieval.Query{Mode: retrieval.BM25, Text: text, Limit: limit, Filter: f, WithVectors: limit == 40},
						retrieval.Query{Mode: retrieval.Vector, Vector: v, Limit: limit, Filter: f, WithVectors: limit == 5},
						retrieval.Query{Mode: retrieval.Hybrid, Text: text, Vector: v, Alpha: 0.5, Limit: limit, Filter: f, WithVectors: limit != 1},
						retrieval.Query{Mode: retrieval.Hybrid, Text: text, Vector: v, Alpha: 0.3, Limit: limit, Filter: f},
						// gRPC sends alpha as a float32 and GraphQL as the
						// decimal, which ranked fusion's float64 weights
						// tell apart: an alpha a float32 holds exactly.
						retrieval.Query{Mode: retrieval.Hybrid, Text: text, Vector: v, Alpha: 0.375, Fusion: retrieval.RankedFusion, Limit: limit, Filter: f},
						retrieval.Query{Mode: retrieval.Hybrid, Text: text, Alpha: 0, Limit: limit, Filter: f})
				}
			}
			nonEmpty := 0
			for _, q := range queries {
				want, err := gql.Search(ctx, q)
				if err != nil {
					t.Fatalf("graphql %+v: %v", q, err)
				}
				got, err := rpcStore.Search(ctx, q)
				if err != nil {
					t.Fatalf("grpc %+v: %v", q, err)
				}
				if diff := cmp.Diff(want, got, bm25Terms); diff != "" {
					t.Errorf("%s %q limit %d filter %+v: grpc differs from graphql (-graphql +grpc):\n%s", q.Mode, q.Text, q.Limit, q.Filter, diff)
				}
				if len(want) > 0 {
					nonEmpty++
				}
			}
			if nonEmpty < len(queries)*3/4 {
				t.Errorf("only %d of %d queries found anything", nonEmpty, len(queries))
			}
			ids := []string{"D250", "nope", "Q145", "D007", "D007", "D123", "Q25188"}
			wantDocs, gotDocs := retrievaltest.Both(t, gql, rpcStore, func(x retrieval.Index) ([]retrieval.Document, error) { return x.Documents(ctx, ids) })
			if diff := cmp.Diff(wantDocs, gotDocs); diff != "" || len(gotDocs) != 6 {
				t.Errorf("Documents: %d documents; grpc differs from graphql (-graphql +grpc):\n%s", len(gotDocs), diff)
			}
			all := make([]string, len(docs))
			for i, d := range docs {
				all[i] = d.ID
			}
			for _, f := range []retrieval.Filter{{}, {AnyEntities: []string{"Q4"}}, {IDs: all[100:180]}} {
				want, err := gql.Cosines(ctx, docs[3].Vector, all, f)
				if err != nil {
					t.Fatal(err)
				}
				got, err := rpcStore.Cosines(ctx, docs[3].Vector, all, f)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got); diff != "" || len(got) == 0 {
					t.Errorf("Cosines %+v: %d values; grpc differs from graphql (-graphql +grpc):\n%s", f, len(got), diff)
				}
			}
		})
	}
}

// bm25Terms compares explanations with their terms in any order: BM25's
// lists them in map order, which changes from call to call.
var bm25Terms = cmp.Comparer(func(a, b retrieval.Hit) bool {
	terms := func(s string) []string {
		t := strings.Split(s, ", ")
		slices.Sort(t)
		return t
	}
	ta, tb := terms(a.Explain), terms(b.Explain)
	a.Explain, b.Explain = "", ""
	return cmp.Equal(a, b) && slices.Equal(ta, tb)
})

// A gRPC endpoint that does not answer is an outage (errs.Unavailable), and
// a cancelled context comes back as such.
func TestSearchOverGRPCUnavailable(t *testing.T) {
	s := testStore(t, "")
	if s.rpc == nil {
		t.Skip("DMAR_WEAVIATE_GRPC=off")
	}
	ctx := context.Background()
	if err := s.Put(ctx, films); err != nil {
		t.Fatal(err)
	}
	cfg := s.Config()
	cfg.GRPC, cfg.Create = "127.0.0.1:1", false // nothing listens there
	dead, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	_, err = dead.Search(ctx, retrieval.Query{Mode: retrieval.BM25, Text: "nolan", Limit: 3})
	if e, ok := errs.As(err); !ok || e.Code != errs.Unavailable {
		t.Errorf("search on a dead gRPC port: %v, want an errs.Unavailable error", err)
	}
	if _, err := dead.Documents(ctx, []string{"Q145"}); err == nil {
		t.Error("Documents on a dead gRPC port succeeded")
	}
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Search(c, retrieval.Query{Mode: retrieval.BM25, Text: "nolan", Limit: 3}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v, want context.Canceled", err)
	}
}
