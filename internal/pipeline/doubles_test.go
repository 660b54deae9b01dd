package pipeline_test

import (
	"context"
	"hash/fnv"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
)

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
		out[i] = scoringtest.Normalize(v)
	}
	return out, ctx.Err()
}
