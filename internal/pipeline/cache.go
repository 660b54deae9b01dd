package pipeline

import (
	"context"
	"fmt"

	"github.com/dmar-kg/dmar/internal/kg"
)

// The subgraph/embedding cache: extracting an ego subgraph and encoding it
// with the GNN are the costly parts of the structural path, and the same
// entities recur across the candidates of one request and across requests.

// entry is a cached subgraph and its GNN embedding. An empty entry records a
// root the graph does not know.
type entry struct {
	sg  kg.Subgraph
	emb []float32
}

func (sr scorer) usesGNN() bool { return sr.Structure == "gnn" && sr.gnn != nil }

// cacheKey separates entries by subgraph parameters and by structure model,
// whose embeddings differ.
func (sr scorer) cacheKey(root string) string {
	o := sr.Subgraph
	model := "ged"
	if sr.usesGNN() {
		model = sr.gnn.Version()
	}
	return fmt.Sprintf("%s|%d|%d|%d|%s", root, o.Hops, o.MaxNodes, o.HubDegree, model)
}

// subgraphs returns the cached or freshly extracted (and encoded) subgraphs
// of roots: one batched graph call and one batched GNN call for the misses.
// Roots unknown to the graph are absent (and cached as such).
func (sr scorer) subgraphs(ctx context.Context, roots []string) (map[string]*entry, error) {
	out, miss := sr.cached(roots)
	if len(miss) == 0 {
		return out, nil
	}
	sgs, err := sr.graph.Subgraphs(ctx, miss, sr.Subgraph)
	if err != nil {
		return nil, fmt.Errorf("subgraphs: %w", err)
	}
	var fresh []*entry
	var list []kg.Subgraph
	for _, q := range miss {
		sg, ok := sgs[q]
		if !ok {
			sr.cache.Add(sr.cacheKey(q), &entry{})
			continue
		}
		e := &entry{sg: sg}
		fresh = append(fresh, e)
		list = append(list, sg)
		out[q] = e
	}
	if sr.usesGNN() && len(list) > 0 {
		embs, err := sr.gnn.EncodeGraphs(ctx, list)
		if err != nil {
			return nil, fmt.Errorf("encode subgraphs: %w", err)
		}
		for i, e := range fresh {
			e.emb = embs[i]
		}
	}
	for _, e := range fresh {
		sr.cache.Add(sr.cacheKey(e.sg.Root), e)
	}
	return out, nil
}

// cached splits roots, de-duplicated in order, into the cache's hits (known
// roots only) and its misses.
func (sr scorer) cached(roots []string) (map[string]*entry, []string) {
	out := map[string]*entry{}
	var miss []string
	seen := map[string]bool{}
	m := sr.metrics
	for _, q := range roots {
		if seen[q] {
			continue
		}
		seen[q] = true
		if e, ok := sr.cache.Get(sr.cacheKey(q)); ok {
			if m != nil {
				m.Cache(true)
			}
			if e != nil && len(e.sg.Nodes) > 0 {
				out[q] = e
			}
			continue
		}
		if m != nil {
			m.Cache(false)
		}
		miss = append(miss, q)
	}
	return out, miss
}
