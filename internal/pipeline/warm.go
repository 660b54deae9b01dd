package pipeline

import (
	"context"
	"fmt"
)

// Warm fills the subgraph/embedding cache for roots under opts' subgraph
// parameters and structure model, in batches, so that first requests do not
// pay for extraction and GNN encoding. It returns how many roots have a
// subgraph. Useful for an embedded graph whose entities fit in the cache.
func (p *Pipeline) Warm(ctx context.Context, roots []string, opts Options) (int, error) {
	if err := opts.Validate(); err != nil {
		return 0, err
	}
	if len(roots) > p.cfg.CacheSize {
		roots = roots[:p.cfg.CacheSize]
	}
	r := p.newRequest("", opts)
	const batch = 1024
	n := 0
	for start := 0; start < len(roots); start += batch {
		end := min(start+batch, len(roots))
		got, err := r.subgraphs(ctx, roots[start:end])
		if err != nil {
			return n, fmt.Errorf("warm cache: %w", err)
		}
		n += len(got)
	}
	return n, nil
}
