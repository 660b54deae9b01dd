package pipeline_test

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
)

// cosineIndex is memindex with the cosines computed where the documents
// are (retrieval.CosineReader, as Weaviate does), by the pipeline's own
// arithmetic (the channel's cosiner: float32 sums, float64 norms), counting
// the calls and the IDs asked for.
type cosineIndex struct {
	*memindex.Index
	mu         sync.Mutex
	calls, ids int
}

func (x *cosineIndex) Cosines(ctx context.Context, v []float32, ids []string, f retrieval.Filter) (map[string]float64, error) {
	x.mu.Lock()
	x.calls++
	x.ids += len(ids)
	x.mu.Unlock()
	docs, err := x.Documents(ctx, ids)
	if err != nil {
		return nil, err
	}
	var qq float32
	for _, a := range v {
		qq += a * a
	}
	na := math.Sqrt(float64(qq))
	out := map[string]float64{}
	allowed := map[string]bool{}
	for _, id := range f.IDs {
		allowed[id] = true
	}
	for _, d := range docs {
		if len(f.IDs) > 0 && !allowed[d.ID] {
			continue
		}
		var bb, ab float32
		for i, b := range d.Vector {
			bb += b * b
			ab += v[i] * b
		}
		out[d.ID] = float64(ab) / (na * math.Sqrt(float64(bb)))
	}
	return out, nil
}

// An index that computes cosines is asked for the ones the channel's
// ranking can need only, in at most two calls a request, and the results are
// those of the index that hands over its documents, memindex's own cosines
// included.
func TestChannelAsksTheIndexForTheCosinesItNeeds(t *testing.T) {
	_, x := film(t)
	ci := &cosineIndex{Index: x}
	// memindex computes cosines itself too: the plain pipeline sees only
	// the port's methods, so that it fetches the documents.
	plain := newPipeline(t, func(c *pipeline.Config) { c.Index = struct{ retrieval.Index }{x} })
	withCos := newPipeline(t, func(c *pipeline.Config) { c.Index = ci })
	direct := newPipeline(t, nil) // memindex's own Cosines
	o := plain.Defaults().QuestionAware()
	o.Stage2Vector = "" // stage 2 with enc(Q'): more candidates, more of the channel in play
	one := o
	one.GraphRecall = 1
	filtered := o
	filtered.Filter.IDs = []string{"Q25188", "Q166262", "Q190525", "Q30", "Q145", "Q16", "Q25191"}
	reached, asked, pruned, requests := 0, 0, 0, 0
	for _, q := range []string{"Which films were produced in Canada?", "Who directed Inception?", "What films did Christopher Nolan direct?",
		"Which actors starred in The Prestige?", "What country is Interstellar from?", "Which films were released in 2010?"} {
		for _, opts := range []pipeline.Options{o, one, filtered} {
			a := retrieve(t, plain, q, opts)
			calls0, ids0 := ci.calls, ci.ids
			b := retrieve(t, withCos, q, opts)
			a.TimingsMS, b.TimingsMS = nil, nil
			if diff := cmp.Diff(a, b); diff != "" {
				t.Errorf("%q: results differ with the index's cosines (-documents +cosines):\n%s", q, diff)
			}
			calls, ids := ci.calls-calls0, ci.ids-ids0
			c := retrieve(t, direct, q, opts)
			c.TimingsMS = nil
			if diff := cmp.Diff(a, c); diff != "" {
				t.Errorf("%q: results differ with memindex's cosines (-documents +cosines):\n%s", q, diff)
			}
			if calls > 2 {
				t.Errorf("%q: %d Cosines calls, want at most 2", q, calls)
			}
			n := 0
			for _, r := range b.Results {
				if r.Breakdown.Graph != nil {
					n++
				}
			}
			reached += n
			asked += ids
			requests++
			if calls == 2 {
				pruned++
			}
		}
	}
	if reached == 0 || pruned == 0 {
		t.Errorf("%d requests: %d channel results, %d with a second Cosines call: the cases test nothing", requests, reached, pruned)
	}
	t.Logf("%d requests, %d IDs asked for", requests, asked)
}
