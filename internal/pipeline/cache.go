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

func (r request) usesGNN() bool { return r.opts.Structure == "gnn" && r.p.cfg.GNN != nil }

// cacheKey separates entries by subgraph parameters and by structure model,
// whose embeddings differ.
func (r request) cacheKey(root string) string {
	o := r.opts
	model := "ged"
	if r.usesGNN() {
		model = r.p.cfg.GNN.Version()
	}
	return fmt.Sprintf("%s|%d|%d|%d|%s", root, o.Hops, o.MaxNodes, o.HubDegree, model)
}

// subgraphs returns the cached or freshly extracted (and encoded) subgraphs
// of roots: one batched graph call and one batched GNN call for the misses.
// Roots unknown to the graph are absent (and cached as such).
func (r request) subgraphs(ctx context.Context, roots []string) (map[string]*entry, error) {
	out, miss := r.cached(roots)
	if len(miss) == 0 {
		return out, nil
	}
	sgs, err := r.p.cfg.Graph.Subgraphs(ctx, miss, r.opts.SubgraphParams())
	if err != nil {
		return nil, fmt.Errorf("subgraphs: %w", err)
	}
	var fresh []*entry
	var list []kg.Subgraph
	for _, q := range miss {
		sg, ok := sgs[q]
		if !ok {
			r.p.cache.Add(r.cacheKey(q), &entry{})
			continue
		}
		e := &entry{sg: sg}
		fresh = append(fresh, e)
		list = append(list, sg)
		out[q] = e
	}
	if r.usesGNN() && len(list) > 0 {
		embs, err := r.p.cfg.GNN.EncodeGraphs(ctx, list)
		if err != nil {
			return nil, fmt.Errorf("encode subgraphs: %w", err)
		}
		for i, e := range fresh {
			e.emb = embs[i]
		}
	}
	for _, e := range fresh {
		r.p.cache.Add(r.cacheKey(e.sg.Root), e)
	}
	return out, nil
}

// cached splits roots, de-duplicated in order, into the cache's hits (known
// roots only) and its misses.
func (r request) cached(roots []string) (map[string]*entry, []string) {
	out := map[string]*entry{}
	var miss []string
	seen := map[string]bool{}
	m := r.p.cfg.Metrics
	for _, q := range roots {
		if seen[q] {
			continue
		}
		seen[q] = true
		if e, ok := r.p.cache.Get(r.cacheKey(q)); ok {
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
