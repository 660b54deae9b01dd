package pipeline

import (
	"context"
	"fmt"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Warm fills the subgraph/embedding cache for roots under opts' subgraph
// parameters and structure model, in batches, so that first requests do not
// pay for extraction and GNN encoding. It returns how many roots have a
// subgraph. Useful for an embedded graph whose entities fit in the cache.
// With opts' graph channel on it also embeds the relation texts of those
// subgraphs' edges (pathrel.Relations.Warm).
func (p *Pipeline) Warm(ctx context.Context, roots []string, opts Options) (int, error) {
	if err := opts.Validate(); err != nil {
		return 0, err
	}
	if len(roots) > p.cfg.CacheSize {
		roots = roots[:p.cfg.CacheSize]
	}
	sr := p.newRequest("", opts).scorer(nil)
	// With the graph channel on, the relation texts on the subgraphs' edges
	// are embedded too (a first request would otherwise encode them all).
	rels := opts.GraphRecall > 0 && opts.GraphRelations != "none"
	const batch = 1024
	n := 0
	for start := 0; start < len(roots); start += batch {
		end := min(start+batch, len(roots))
		got, err := sr.subgraphs(ctx, roots[start:end])
		if err != nil {
			return n, fmt.Errorf("warm cache: %w", err)
		}
		n += len(got)
		if rels {
			subs := make(map[string]kg.Subgraph, len(got))
			for q, e := range got {
				subs[q] = e.sg
			}
			if _, err := p.relations(opts.GraphRelations == "directed").Warm(ctx, subs); err != nil {
				return n, fmt.Errorf("warm relation texts: %w", err)
			}
		}
	}
	return n, nil
}
