package weaviate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
)

// The benchmarks need DMAR_PARITY=1 and DMAR_WEAVIATE_URL (see
// TestParityCodexm) and run one pass each:
//
//	DMAR_PARITY=1 DMAR_WEAVIATE_URL=http://127.0.0.1:8080 go test -run '^$' \
//	  -bench . -benchtime 1x -timeout 30m ./internal/retrieval/weaviate/

// BenchmarkImportCodexm loads the 16,352 codexm documents with their
// encoder vectors into a fresh collection (Weaviate) and into the embedded
// index (Put plus building its inverted index), reporting objects/s. Without
// cached real vectors (DMAR_PARITY_ENCODE=1) it uses seeded random unit
// vectors of the same dimension and says so in the benchmark's name.
func BenchmarkImportCodexm(b *testing.B) {
	needParity(b)
	c := loadCodexm(b)
	docs, synthetic := c.withSyntheticVectors()
	suffix := ""
	if synthetic {
		suffix = "-synthetic-vectors"
	}
	ctx := context.Background()
	for _, transport := range []struct{ name, grpc string }{{"grpc", grpcAddr()}, {"rest", ""}} {
		b.Run("weaviate-"+transport.name+suffix, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s := testStoreClass(b, fmt.Sprintf("BenchImport%d", rand.Int64()), "")
				s.cfg.GRPC = transport.grpc
				if transport.grpc == "" {
					// The client uses gRPC for batches whenever it was built with it.
					var err error
					if s, err = New(ctx, s.cfg); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				start := time.Now()
				st, err := s.Load(ctx, docs, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(st.Imported)/time.Since(start).Seconds(), "objects/s")
			}
		})
	}
	b.Run("memindex"+suffix, func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			start := time.Now()
			x := memindex.New(memindex.DefaultParams())
			if err := x.Put(ctx, docs); err != nil {
				b.Fatal(err)
			}
			// The first search builds the inverted index.
			if _, err := x.Search(ctx, retrieval.Query{Mode: retrieval.BM25, Text: "film", Limit: 1}); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(len(docs))/time.Since(start).Seconds(), "objects/s")
		}
	})
}

// BenchmarkStages times DMAR's two searches over the kgqa dev questions, one
// query at a time: stage 1 BM25 top n=100 of the question, stage 2 hybrid
// (relativeScore, alpha 0.5) top p=20, Weaviate beside the embedded index.
// Reported: p50 and p95 latency per query in ms. One iteration is one pass
// over all questions (use -benchtime 1x). Question vectors are the real
// encoder's; document vectors too when cached, else seeded random unit
// vectors (named so in the benchmark).
func BenchmarkStages(b *testing.B) {
	needParity(b)
	c := loadCodexm(b)
	docs, synthetic := c.withSyntheticVectors()
	ctx := context.Background()
	mem := memindex.New(memindex.DefaultParams())
	if err := mem.Put(ctx, docs); err != nil {
		b.Fatal(err)
	}
	name := c.name
	if synthetic {
		name += "-synthetic"
	}
	wv := loadParityClass(b, name, docs, false)
	backends := []struct {
		name string
		idx  retrieval.Index
	}{{"weaviate", wv}, {"memindex", mem}}
	stages := []struct {
		name string
		q    func(i int) retrieval.Query
	}{
		{"stage1-bm25-n100", func(i int) retrieval.Query {
			return retrieval.Query{Mode: retrieval.BM25, Text: c.questions[i], Limit: 100}
		}},
	}
	if c.qvecs != nil {
		stage2 := "stage2-hybrid-p20"
		if synthetic {
			stage2 += "-synthetic-doc-vectors"
		}
		stages = append(stages, struct {
			name string
			q    func(i int) retrieval.Query
		}{stage2, func(i int) retrieval.Query {
			return retrieval.Query{Mode: retrieval.Hybrid, Text: c.questions[i], Vector: c.qvecs[i], Alpha: 0.5, Limit: 20}
		}})
	}
	for _, st := range stages {
		for _, be := range backends {
			b.Run(st.name+"/"+be.name, func(b *testing.B) {
				// Warm up once (first-query costs: index build, connections).
				if _, err := be.idx.Search(ctx, st.q(0)); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				var lat []time.Duration
				for n := 0; n < b.N; n++ {
					for i := range c.questions {
						t0 := time.Now()
						if _, err := be.idx.Search(ctx, st.q(i)); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(t0))
					}
				}
				b.ReportMetric(float64(percentile(lat, 0.50).Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(percentile(lat, 0.95).Microseconds())/1000, "p95-ms")
			})
		}
	}
}
