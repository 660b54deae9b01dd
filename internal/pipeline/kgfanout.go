package pipeline

import (
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// The graph channel's fan-out normaliser (graph_fanout; off by default):
// a path's graph score loses graph_fanout x the mean over its steps of
// ln(n), n the entities the step's relation reaches from its node in that
// direction (pathrel.Fanout). On kgqa train most of the channel's one-hop
// misses are a gold entity ranked below others: either other objects of the
// same relation (an equal loss for all of them: their order is kept) or the
// objects of a confusable relation that reaches many ("country of" from
// Israel: its cities) above the one object of the right one ("continent":
// Asia). Two-hop paths lose theirs too: with one-hop paths alone normalised,
// the two-hop ones rose over them. docs/method.md.

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
