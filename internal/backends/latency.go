package backends

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/dmar-kg/dmar/internal/bench"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// LatencyBackends are what dmar bench latency times: p, the set's pipeline,
// alone when the set is embedded; else its embedded twin over the same
// data and models first, then p as "remote", warmed with the twin's roots
// when its own graph gives none (Neo4j).
func (s *Set) LatencyBackends(ctx context.Context, p *pipeline.Pipeline, out io.Writer, log *slog.Logger) ([]bench.LatencyBackend, error) {
	given := bench.LatencyBackend{Name: "embedded", Detail: bench.BackendName(s.cfg.Graph, s.cfg.Index), Pipeline: p, WarmRoots: EntityRoots(p.Graph())}
	if s.cfg.GraphBackend().Embedded() && s.cfg.IndexBackend().Embedded() {
		return []bench.LatencyBackend{given}, nil
	}
	emb, err := s.Embedded(ctx, out)
	if err != nil {
		return nil, fmt.Errorf("bench latency: the embedded backends to compare with: %w", err)
	}
	ep, err := emb.Pipeline(nil, log, false)
	if err != nil {
		return nil, err
	}
	twin := bench.LatencyBackend{Name: "embedded", Detail: bench.BackendName("", ""), Pipeline: ep, WarmRoots: EntityRoots(ep.Graph())}
	if given.WarmRoots == nil {
		given.WarmRoots = twin.WarmRoots
	}
	given.Name = "remote"
	return []bench.LatencyBackend{twin, given}, nil
}
