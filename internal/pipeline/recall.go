package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/pipeline/kgchan"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// recalled is phase 1's output: Q encoded and linked, its n candidates
// and what the channels added to them.
type recalled struct {
	qvec     []float32
	relvec   *chanio.RelVector // Q under the relation encoder (qvec without one of its own)
	mentions []kg.Mention
	hits     []retrieval.Hit // the stage-1 candidates, in search order, then the channels'
	channels channels
	search   int // how many of hits the stage-1 search found (their prefix)
	// structOn says the structural path survived linking: it is off when the
	// request turns it off or the graph cannot link.
	structOn bool
	sim      func(q, d *entry) float64 // the structural similarity in use
}

// recaller is phase 1's stage, composed with the link stage, the channels
// and the scorer (whose structural similarity phase 2 uses): Q encoded and
// linked, the stage-1 search, the channels' documents added. It reads the
// index and its own options; of the request, the query and the trace.
type recaller struct {
	index    retrieval.Index
	link     linker
	channels channelSet
	score    scorer
	query    string
	trace    *trace
	recallOptions
}

// recallOptions are phase 1's options.
type recallOptions struct {
	N           int    // stage-1 candidates
	Stage1      string // bm25 | hybrid
	Stage1Alpha float64
	Fusion      retrieval.Fusion // hybrid fusion: relativeScore | rankedFusion (stage 2's too)
	Filter      retrieval.Filter
	// StructureNeedsChannel: with the KG channel on, a request whose
	// channel reached no entity's own page loses its structural path.
	StructureNeedsChannel bool
}

func (o recallOptions) validate() error {
	for _, err := range []error{
		errs.IntIn("n", o.N, 1, 1000),
		errs.OneOf("stage1", o.Stage1, "bm25", "hybrid"),
		errs.Unit("stage1_alpha", o.Stage1Alpha),
		errs.OneOf("fusion", string(o.Fusion), string(retrieval.RelativeScore), string(retrieval.RankedFusion)),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// recallOptions are phase 1's settings in o.
func (o Options) recallOptions() recallOptions {
	return recallOptions{N: o.N, Stage1: o.Stage1, Stage1Alpha: o.Stage1Alpha, Fusion: o.Fusion, Filter: o.Filter,
		StructureNeedsChannel: o.StructureNeedsChannel}
}

// recaller is the request's phase 1.
func (r request) recaller() recaller {
	return recaller{index: r.p.cfg.Index, link: r.linker(), channels: r.channels(), score: r.scorer(nil), query: r.query, trace: r.trace,
		recallOptions: r.opts.recallOptions()}
}

// recall is phase 1: BM25 (or hybrid) recall of n candidates for Q, joined
// by the channels' (channel.go). Q is encoded and linked on the way: the
// semantic score needs enc(Q), the structural path Q's entities.
func (rc recaller) recall(ctx context.Context) (recalled, error) {
	var rec recalled
	t := time.Now()
	lk := rc.link
	chs := rc.channels
	// The graph channel starts on the early link's entities as soon as
	// their masked question is encoded, while enc(Q) still runs; linking
	// with context mostly keeps them (kgchan.Ahead.of).
	var early *kgchan.Ahead
	q, err := lk.encodeQuestion(ctx, func(el *earlyLink, relvec *chanio.RelVector) {
		c := chs.kg
		c.RelationAhead = kgchan.Encoded(el.mentions, el.vec, nil)
		early = c.RunAhead(ctx, chanio.Query{Text: rc.query, RelVector: relvec, Mentions: el.mentions})
	})
	if err != nil {
		early.Cancel()
		return rec, err
	}
	rec.qvec, rec.relvec = q.vec, q.relvec
	early.SetVector(q.vec)
	rc.trace.timed("encode", t)

	t = time.Now()
	rec.mentions, rec.structOn, err = lk.linkQuery(ctx, q)
	if err != nil {
		return rec, err
	}
	rc.trace.timed("link", t)
	rec.sim = rc.score.similarity(rec.structOn)
	// The KG channel's relation query and its linked roots' neighbourhoods
	// are read while stage 1 searches, unless the early link's already are.
	cq := chanio.Query{Text: rc.query, Vector: rec.qvec, RelVector: rec.relvec, Mentions: rec.mentions}
	if chs.kg.RelationAhead = q.relationQuery(ctx, lk, rec.mentions); chs.kg.RelationAhead == nil {
		chs.kg.RelationAhead = chs.kg.PrefetchRelationQuery(ctx, cq)
	}
	if chs.kg.Ahead = early.Of(rec.mentions); chs.kg.Ahead == nil {
		early.Cancel()
		chs.kg.Ahead = chs.kg.RunAhead(ctx, cq)
	}

	t = time.Now()
	q1 := rc.stage1Query(rec.qvec, rc.N)
	q1.WithVectors = true
	rec.hits, err = rc.index.Search(ctx, q1)
	if err != nil {
		return rec, fmt.Errorf("stage 1 search: %w", err)
	}
	rc.trace.timed("recall", t)
	rc.trace.proposed("recall", rec.hits)
	rec.search = len(rec.hits)
	cq.Hits = rec.hits
	return rc.withChannels(ctx, rec, chs, cq)
}

// withChannels runs the channels after the stage-1 search and adds their
// documents to its candidates. With structure_needs_channel, a request
// whose graph channel reached no entity's own page (only documents that
// mention one, or nothing) loses its structural path.
func (rc recaller) withChannels(ctx context.Context, rec recalled, chs channelSet, q chanio.Query) (recalled, error) {
	if !chs.kgOn && !chs.textOn {
		return rec, nil
	}
	ch, err := chs.run(ctx, q, rc.trace)
	if err != nil {
		return rec, err
	}
	rec.channels = ch
	rc.trace.proposed("kg", ch.kg.Hits)
	rc.trace.proposed("text", ch.text.Hits)
	rec.hits = mergeHits(rec.hits, ch.hits())
	if rc.StructureNeedsChannel && chs.kgOn && !ch.kg.OwnPages() && rec.structOn {
		rec.structOn = false
		rc.trace.fallback("no_graph_evidence", "the graph channel reached no entity's own page: the question-blind structural score is off (alpha=1, beta=0)")
	}
	return rec, nil
}

// stage1Query is phase 1's search for Q: BM25, or hybrid with stage1_alpha.
func (rc recaller) stage1Query(qvec []float32, limit int) retrieval.Query {
	o := rc.recallOptions
	q := retrieval.Query{Mode: retrieval.BM25, Text: rc.query, Limit: limit, Filter: o.Filter}
	if o.Stage1 == "hybrid" {
		q.Mode, q.Vector, q.Alpha, q.Fusion = retrieval.Hybrid, qvec, o.Stage1Alpha, o.Fusion
	}
	return q
}
