package pipeline

import (
	"github.com/dmar-kg/dmar/internal/retrieval"
	"time"

	"github.com/dmar-kg/dmar/internal/vec"
)

// request is one retrieval: the pipeline, the validated options, the query
// and the trace. It builds the stages (linker, the channels, recaller,
// scorer, paper, finalRanker, explainer), each with only the backends and
// the options it reads; what one stage hands the
// next is in its return value. The only thing stages share is the trace,
// an append-only log.
type request struct {
	p     *Pipeline
	opts  Options
	query string
	trace *trace
}

func (p *Pipeline) newRequest(query string, opts Options) request {
	return request{p: p, opts: opts, query: query, trace: &trace{metrics: p.cfg.Metrics, fallbacks: []Fallback{}, timings: map[string]float64{}, entStd: map[string]float64{}}}
}

// trace records the fallbacks (in the order they fire) and the stage timings
// of one request, and forwards both to the metrics.
type trace struct {
	metrics   Metrics
	fallbacks []Fallback
	timings   map[string]float64 // milliseconds, summed per stage
	entStd    map[string]float64 // per stage: the spread of the raw ent over its candidates
	// candidates are the ids each source proposed (recall, kg, text), for
	// dmar eval's miss analysis
	candidates map[string][]string
}

// proposed records the ids of hits as source's candidates.
func (t *trace) proposed(source string, hits []retrieval.Hit) {
	if t.candidates == nil {
		t.candidates = map[string][]string{}
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Doc.ID
	}
	t.candidates[source] = ids
}

// entSpread records how much ent tells a stage's candidates apart: the
// population std over all of them (stage), over those with ent > 0
// (stage_nonzero), and the share of distinct values among those
// (stage_distinct; 1: no ties).
func (t *trace) entSpread(stage string, ent []float64) {
	t.entStd[stage] = vec.Std(ent)
	var pos []float64
	distinct := map[float64]bool{}
	for _, e := range ent {
		if e > 0 {
			pos = append(pos, e)
			distinct[e] = true
		}
	}
	t.entStd[stage+"_nonzero"] = vec.Std(pos)
	if len(pos) > 0 {
		t.entStd[stage+"_distinct"] = float64(len(distinct)) / float64(len(pos))
	}
}

// Fallback records a fallback (the channels' Trace).
func (t *trace) Fallback(name, reason string) { t.fallback(name, reason) }

func (t *trace) fallback(name, reason string) {
	t.fallbacks = append(t.fallbacks, Fallback{Name: name, Reason: reason})
	if t.metrics != nil {
		t.metrics.Fallback(name)
	}
}

// HasFallback reports whether fallback name was recorded.
func (t *trace) HasFallback(name string) bool {
	for _, f := range t.fallbacks {
		if f.Name == name {
			return true
		}
	}
	return false
}

// timed adds the time since start to stage name.
func (t *trace) timed(name string, start time.Time) {
	d := time.Since(start)
	t.Add(name, d)
	if t.metrics != nil {
		t.metrics.Stage(name, d)
	}
}

// Add adds d to stage name without reporting it to the metrics.
func (t *trace) Add(name string, d time.Duration) {
	t.timings[name] += float64(d.Microseconds()) / 1000
}
