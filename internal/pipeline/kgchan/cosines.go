package kgchan

import (
	"context"

	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// The reached documents' cosines from an index that computes them where the
// documents are (retrieval.CosineReader: Weaviate). Each ID costs such an
// index a filter lookup, and the scores stage reads the cosines of only the
// documents that can still reach the graph_recall_k best (its floor), so the
// index is asked for those: the first cosineBatch documents, best path
// first, then the others whose score can reach the k-th best of the first
// batch's. The floor the scores stage passes a later document with is never
// below that one, so every document it scores has its cosine, and it keeps
// what it would with all of them.

// cosineBatch is how many documents, best path first, the first call asks
// for.
const cosineBatch = 64

// indexCosines gives d's documents their cosines with qvec when they are
// pending: at most two CosineReader calls, and only the documents with a
// cosine (those the index holds and the filter passes) that the scores stage
// can read stay. Index errors are returned.
func (c Channel) indexCosines(ctx context.Context, qvec []float32, d documents, pop map[string]float64, tr chanio.Trace) (documents, error) {
	if !d.pending {
		return d, nil
	}
	cr := c.Docs.(retrieval.CosineReader)
	first := d.docs[:min(cosineBatch, len(d.docs))]
	cos, err := cr.Cosines(ctx, qvec, docIDs(first), c.Filter)
	if err != nil {
		return documents{}, err
	}
	floor := newScoreFloor(c.K)
	for _, doc := range first {
		if v, ok := cos[doc.id]; ok {
			floor.add(withCosine(c.pathScore(d.pathOf[doc.id], pop[doc.id]), c.Weight, v))
		}
	}
	reach := cosineReach(c.Weight)
	var more []string
	for _, doc := range d.docs[len(first):] {
		if !floor.below(scoreBound(c.pathScore(d.pathOf[doc.id], pop[doc.id]), reach)) {
			more = append(more, doc.id)
		}
	}
	if len(more) > 0 {
		rest, err := cr.Cosines(ctx, qvec, more, c.Filter)
		if err != nil {
			return documents{}, err
		}
		for id, v := range rest {
			cos[id] = v
		}
	}
	out := make([]reachedDoc, 0, len(cos))
	for _, doc := range d.docs {
		if v, ok := cos[doc.id]; ok {
			out = append(out, reachedDoc{id: doc.id, cosQD: v, bridged: doc.bridged})
		}
	}
	c.noDocuments(len(out), len(d.docs), tr)
	return documents{docs: out, pathOf: d.pathOf, bridges: d.bridges}, nil
}

func docIDs(docs []reachedDoc) []string {
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.id
	}
	return ids
}
