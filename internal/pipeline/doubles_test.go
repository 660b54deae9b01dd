package pipeline_test

import (
	"context"
	"hash/fnv"
	"math"
	"strings"

	"github.com/dmar-kg/dmar/internal/kg"
)

// hashEncoder is a deterministic test double for the sentence encoder: a
// hashed bag of lower-cased words, L2-normalised. It is not a model.
type hashEncoder struct{}

func (hashEncoder) Dim() int        { return 64 }
func (hashEncoder) Version() string { return "test-hash-encoder" }
func (hashEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(strings.Trim(w, ".,?!;:\"'()")))
			v[h.Sum32()%64]++
		}
		out[i] = normalize(v)
	}
	return out, ctx.Err()
}

// hashGNN is a deterministic test double for the GNN: hashed node QIDs and
// edge types, L2-normalised.
type hashGNN struct{ calls int }

func (*hashGNN) Version() string { return "test-hash-gnn" }
func (g *hashGNN) EncodeGraphs(ctx context.Context, gs []kg.Subgraph) ([][]float32, error) {
	g.calls++
	out := make([][]float32, len(gs))
	for i, sg := range gs {
		v := make([]float32, 32)
		for _, n := range sg.Nodes {
			h := fnv.New32a()
			h.Write([]byte(n.QID))
			v[h.Sum32()%32] += 1 / float32(1+n.Hop)
		}
		for _, e := range sg.Edges {
			h := fnv.New32a()
			h.Write([]byte(e.PID))
			v[h.Sum32()%32] += 0.5
		}
		out[i] = normalize(v)
	}
	return out, ctx.Err()
}

func normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x * x)
	}
	if s == 0 {
		v[0] = 1
		return v
	}
	n := float32(math.Sqrt(s))
	for i := range v {
		v[i] /= n
	}
	return v
}
