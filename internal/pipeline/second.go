package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// secondStage is phase 3's second half: p candidates for Q' (vector or
// hybrid search) over the whole corpus, not only the stage-1 candidates, so
// that evidence BM25 missed can surface; the channels' documents join them.
func (pp paper) secondStage(ctx context.Context, rec recalled, ref reformulated) (searchHits, error) {
	t := time.Now()
	o := pp.paperOptions
	q2 := retrieval.Query{Mode: retrieval.Vector, Limit: o.P, Filter: o.Filter, WithVectors: true, Text: ref.query}
	q2vec := rec.qvec
	if ref.query != pp.query && o.Stage2Vector != "question" {
		v, err := pp.encoder.Encode(ctx, []string{ref.query})
		if err != nil {
			return searchHits{}, fmt.Errorf("encode reformulated query: %w", err)
		}
		q2vec = v[0]
	}
	q2.Vector = q2vec
	if o.Stage2 == "hybrid" {
		q2.Mode, q2.Alpha, q2.Fusion = retrieval.Hybrid, o.Stage2Alpha, o.Fusion
	}
	hits, err := pp.index.Search(ctx, q2)
	if err != nil {
		return searchHits{}, fmt.Errorf("stage 2 search: %w", err)
	}
	pp.trace.timed("second_stage", t)
	pp.trace.proposed("second", hits)
	return searchHits{hits: mergeHits(hits, rec.channels.hits()), search: len(hits)}, nil
}
