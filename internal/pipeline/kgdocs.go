package pipeline

import (
	"context"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// kgDocuments is the documents stage's output: the documents of the reached
// entities that pass the request's filter, best path first, and the path
// to each document's entity by document ID. From an index that computes
// cosines (pending), docs are every reached entity's ID, and the cosines
// stage (kgcosines.go) keeps those with a document.
type kgDocuments struct {
	docs    []reachedDoc
	pathOf  map[string]pathrel.Path
	pending bool
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
	if _, ok := r.p.cfg.Index.(retrieval.CosineReader); ok {
		docs := make([]reachedDoc, len(ids))
		for i, id := range ids {
			docs[i].id = id
		}
		return kgDocuments{docs: docs, pathOf: pathOf, pending: true}, nil
	}
	docs, err := r.reachedDocuments(ctx, qvec, ids)
	if err != nil {
		return kgDocuments{}, err
	}
	r.noDocuments(len(docs), len(paths))
	return kgDocuments{docs: docs, pathOf: pathOf}, nil
}

// noDocuments says so in the trace when n entities were reached and none
// has a document.
func (r request) noDocuments(docs, reached int) {
	if docs == 0 && reached > 0 && r.opts.Filter.Empty() {
		r.trace.fallback("graph_recall_no_documents", "no reachable entity has a document (document IDs are not the entities' QIDs): the graph channel adds nothing")
	}
}

// reachedDocuments are the documents of ids that pass the request's filter,
// in the order of ids, fetched whole (memindex: no copy, no wire), their
// cosines computed as needed. An index that computes cosines where the
// documents are (retrieval.CosineReader: Weaviate) sends only the cosines
// the ranking can need instead (kgcosines.go), and fetchKept fetches the
// few kept.
func (r request) reachedDocuments(ctx context.Context, qvec []float32, ids []string) ([]reachedDoc, error) {
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
