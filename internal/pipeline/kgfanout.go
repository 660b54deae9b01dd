package pipeline

import (
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// The graph channel's fan-out normaliser (Experiments.GraphFanout, an eval
// variant): a path's graph score loses GraphFanout x the mean over its
// steps of ln(n), n the entities the step's relation reaches from its node
// in that direction (pathrel.Fanout), so that a confusable relation that
// reaches many ("country of" from Israel: its cities) does not outrank the
// one object of the right one ("continent": Asia), while the objects of one
// relation keep their order (an equal loss). Two-hop paths lose theirs too,
// or they would rise over the one-hop ones. docs/method.md.

// fanoutScorer is the normaliser of one request, nil when it is off.
type fanoutScorer struct {
	w     float64
	count *pathrel.Fanout
}

// fanout is the request's normaliser over the walked subgraphs.
func (r request) fanout(subs map[string]kg.Subgraph) *fanoutScorer {
	if r.opts.Experiments.GraphFanout == 0 {
		return nil
	}
	return &fanoutScorer{w: r.opts.Experiments.GraphFanout, count: pathrel.NewFanout(subs)}
}

// of is the (non-positive) part of p's graph score from its fan-out.
func (f *fanoutScorer) of(p pathrel.Path) float64 {
	if f == nil {
		return 0
	}
	return -f.w * f.count.LogMean(p)
}
