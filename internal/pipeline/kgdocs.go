package pipeline

import (
	"context"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// kgDocuments is the documents stage's output: the documents of the reached
// entities that pass the request's filter, best path first, and the path
// to each document's entity by document ID.
type kgDocuments struct {
	docs   []reachedDoc
	pathOf map[string]pathrel.Path
}

// reachedDoc is a reached entity's document as the channel scores it: its
// ID, and its cosine with enc(Q) or the fetched document to compute it from.
type reachedDoc struct {
	id    string
	cosQD float64
	doc   *retrieval.Document // nil when the index computed the cosine
	qc    *cosiner
}

// cos is cos(enc(Q), enc(D)); 0 for a fetched document without a vector.
func (d reachedDoc) cos() float64 {
	if d.doc == nil {
		return d.cosQD
	}
	if len(d.doc.Vector) == 0 {
		return 0
	}
	return d.qc.cosine(d.doc.Vector)
}

// entityDocuments are the documents of the graphMaxEntities best reached
// entities. An entity's document is the document whose ID is its QID (the
// convention of the entity-page corpora, codexm and codexm-film). Index
// errors are returned.
func (r request) entityDocuments(ctx context.Context, qvec []float32, w kgWalk) (kgDocuments, error) {
	paths := w.reached
	if len(paths) > graphMaxEntities {
		paths = paths[:graphMaxEntities]
	}
	ids := make([]string, len(paths))
	pathOf := make(map[string]pathrel.Path, len(paths))
	for i, p := range paths {
		ids[i], pathOf[p.Entity] = p.Entity, p
	}
	docs, err := r.reachedCosines(ctx, qvec, ids)
	if err != nil {
		return kgDocuments{}, err
	}
	if len(docs) == 0 && len(paths) > 0 && r.opts.Filter.Empty() {
		r.trace.fallback("graph_recall_no_documents", "no reachable entity has a document (document IDs are not the entities' QIDs): the graph channel adds nothing")
	}
	return kgDocuments{docs: docs, pathOf: pathOf}, nil
}

// reachedCosines are the documents of ids that pass the request's filter, in
// the order of ids. An index that computes cosines where the documents are
// (retrieval.CosineReader: Weaviate) sends only their IDs and cosines, and
// fetchKept fetches the few kept; another one's documents are fetched whole
// here (memindex: no copy, no wire), their cosines computed as needed.
func (r request) reachedCosines(ctx context.Context, qvec []float32, ids []string) ([]reachedDoc, error) {
	if c, ok := r.p.cfg.Index.(retrieval.CosineReader); ok {
		cos, err := c.Cosines(ctx, qvec, ids, r.opts.Filter)
		if err != nil {
			return nil, err
		}
		out := make([]reachedDoc, 0, len(cos))
		for _, id := range ids {
			if v, ok := cos[id]; ok {
				out = append(out, reachedDoc{id: id, cosQD: v})
			}
		}
		return out, nil
	}
	docs, err := r.p.cfg.Index.Documents(ctx, ids)
	if err != nil {
		return nil, err
	}
	keep := filterOf(r.opts.Filter)
	qc := newCosiner(qvec)
	out := make([]reachedDoc, 0, len(docs))
	for i := range docs {
		if keep(docs[i]) {
			out = append(out, reachedDoc{id: docs[i].ID, doc: &docs[i], qc: &qc})
		}
	}
	return out, nil
}

// filterOf is the request's filter as a predicate on documents.
func filterOf(f retrieval.Filter) func(retrieval.Document) bool {
	ids, ents := set(f.IDs), set(f.AnyEntities)
	return func(d retrieval.Document) bool {
		if len(ids) > 0 && !ids[d.ID] {
			return false
		}
		if len(ents) == 0 {
			return true
		}
		for _, e := range d.Entities {
			if ents[e] {
				return true
			}
		}
		return false
	}
}

func set(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
