package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// recalled is phase 1's output: Q encoded and linked, its n candidates
// and what the channels added to them.
type recalled struct {
	qvec     []float32
	relvec   []float32 // Q under the relation encoder (qvec without one of its own)
	mentions []kg.Mention
	hits     []retrieval.Hit // the stage-1 candidates, in search order, then the channels'
	channels channels
	search   int // how many of hits the stage-1 search found (their prefix)
	// structOn says the structural path survived linking: it is off when the
	// request turns it off or the graph cannot link.
	structOn bool
	sim      func(q, d *entry) float64 // the structural similarity in use
}

// recall is phase 1: BM25 (or hybrid) recall of n candidates for Q, joined
// by the channels' (channel.go). Q is encoded and linked on the way: the
// semantic score needs enc(Q), the structural path Q's entities.
func (r request) recall(ctx context.Context) (recalled, error) {
	var rec recalled
	t := time.Now()
	lk := r.linker()
	q, err := lk.encodeQuestion(ctx)
	if err != nil {
		return rec, err
	}
	rec.qvec, rec.relvec = q.vec, q.relvec
	r.trace.timed("encode", t)

	t = time.Now()
	rec.mentions, rec.structOn, err = lk.linkQuery(ctx, q)
	if err != nil {
		return rec, err
	}
	r.trace.timed("link", t)
	rec.sim = r.scorer(nil).similarity(rec.structOn)
	// The KG channel's relation query and its linked roots' neighbourhoods
	// are read while stage 1 searches.
	chs := r.channels()
	cq := chanio.Query{Text: r.query, Vector: rec.qvec, RelVector: rec.relvec, Mentions: rec.mentions}
	if chs.kg.RelationAhead = q.early.relationQuery(r.query, rec.mentions); chs.kg.RelationAhead == nil {
		chs.kg.RelationAhead = chs.kg.PrefetchRelationQuery(ctx, cq)
	}
	chs.kg.NeighbourhoodsAhead = chs.kg.PrefetchNeighbourhoods(ctx, rec.mentions)

	t = time.Now()
	q1 := r.stage1Query(rec.qvec, r.opts.N)
	q1.WithVectors = true
	rec.hits, err = r.p.cfg.Index.Search(ctx, q1)
	if err != nil {
		return rec, fmt.Errorf("stage 1 search: %w", err)
	}
	r.trace.timed("recall", t)
	rec.search = len(rec.hits)
	cq.Hits = rec.hits
	return r.withChannels(ctx, rec, chs, cq)
}

// withChannels runs the channels after the stage-1 search and adds their
// documents to its candidates. With structure_needs_channel, a request
// whose graph channel reached no entity's own page (only documents that
// mention one, or nothing) loses its structural path.
func (r request) withChannels(ctx context.Context, rec recalled, chs channelSet, q chanio.Query) (recalled, error) {
	o := r.opts
	if o.GraphRecall == 0 && o.TextGraph == 0 {
		return rec, nil
	}
	ch, err := chs.run(ctx, q, r.trace)
	if err != nil {
		return rec, err
	}
	rec.channels = ch
	rec.hits = mergeHits(rec.hits, ch.hits())
	if o.StructureNeedsChannel && o.GraphRecall > 0 && !ch.kg.OwnPages() && rec.structOn {
		rec.structOn = false
		r.trace.fallback("no_graph_evidence", "the graph channel reached no entity's own page: the question-blind structural score is off (alpha=1, beta=0)")
	}
	return rec, nil
}

// stage1Query is phase 1's search for Q: BM25, or hybrid with stage1_alpha.
func (r request) stage1Query(qvec []float32, limit int) retrieval.Query {
	o := r.opts
	q := retrieval.Query{Mode: retrieval.BM25, Text: r.query, Limit: limit, Filter: o.Filter}
	if o.Stage1 == "hybrid" {
		q.Mode, q.Vector, q.Alpha, q.Fusion = retrieval.Hybrid, qvec, o.Stage1Alpha, o.Fusion
	}
	return q
}
