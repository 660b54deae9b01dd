package pathrel

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat/graphfeattest"
)

// hashEncoder embeds a text as a seeded random vector of its hash: the
// benchmark times the walk, not a model.
type hashEncoder struct{}

func (hashEncoder) Encode(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		rng := rand.New(rand.NewPCG(h.Sum64(), 1))
		v := make([]float32, 384)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		out[i] = v
	}
	return out, nil
}
func (hashEncoder) Dim() int        { return 384 }
func (hashEncoder) Version() string { return "hash-v1" }

// BenchmarkReach compares the walk with the plain one (refReach) over the
// graph channel's two-hop neighbourhoods of 32 seeded codexm roots, side by
// side; relation texts are cached before timing, as in a running server.
//
//	go test -run '^$' -bench BenchmarkReach ./internal/scoring/pathrel/
func BenchmarkReach(b *testing.B) {
	g := graphfeattest.Codexm(b)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	ents := g.AllEntities()
	type question struct {
		starts []Root
		subs   map[string]kg.Subgraph
		q      []float32
	}
	var qs []question
	for len(qs) < 32 {
		root := ents[rng.IntN(len(ents))].QID
		subs, err := kg.Neighbourhoods(ctx, g, []string{root}, kg.SubgraphParams{Hops: 2, MaxNodes: 4000, HubDegree: kg.DefaultSubgraphParams().HubDegree})
		if err != nil {
			b.Fatal(err)
		}
		v, _ := hashEncoder{}.Encode(ctx, []string{"question about " + root})
		qs = append(qs, question{Mentioned(root), subs, v[0]})
	}
	rel := NewRelations(hashEncoder{}, false)
	for _, q := range qs {
		if _, err := rel.Reach(ctx, q.q, q.starts, q.subs, 2, nil); err != nil {
			b.Fatal(err)
		}
	}
	for _, impl := range []struct {
		name string
		f    func(context.Context, []float32, []Root, map[string]kg.Subgraph, int, map[StepKey]float64) ([]Path, error)
	}{{"walk", rel.Reach}, {"plain", rel.refReach}} {
		b.Run(impl.name, func(b *testing.B) {
			for b.Loop() {
				for _, q := range qs {
					if _, err := impl.f(ctx, q.q, q.starts, q.subs, 2, nil); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
