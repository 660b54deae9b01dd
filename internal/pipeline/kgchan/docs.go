package kgchan

import (
	"context"
	"slices"
	"strings"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/mentions"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
	"github.com/dmar-kg/dmar/internal/vec"
)

// documents is the documents stage's output: the documents of the reached
// entities that pass the request's filter, best path first, and the path
// to each document's entity by document ID. From an index that computes
// cosines (pending), docs are every reached entity's ID, and the cosines
// stage (cosines.go) keeps those with a document. A document reached
// through what it mentions (graph_mentions) has the path to the entity it
// mentions, its relevance scaled by the bridge's weight, and its bridge.
type documents struct {
	docs    []reachedDoc
	pathOf  map[string]pathrel.Path
	bridges map[string]api.GraphBridge
	pending bool
}

// reachedDoc is a reached entity's document as the channel scores it: its
// ID, and its cosine with enc(Q) or the fetched document to compute it from.
type reachedDoc struct {
	id    string
	cosQD float64
	doc   *retrieval.Document // nil when the index computed the cosine
	qc    *vec.Cosiner
	// bridged: the document is reached through a mention, not as the
	// entity's own page
	bridged bool
}

// The bridge's bounds: the best graphBridgeEntities reached entities are
// looked up, graphBridgeDocs documents each (title mentions first), and the
// graphBridgeKept best bridged documents are scored.
const (
	graphBridgeEntities = 500
	graphBridgeDocs     = 50
	graphBridgeKept     = 1000
)

// placeWeight is how much a mention counts by where it is: a title names
// what the document is about, a first sentence what it is or belongs to, a
// passing mention little.
var placeWeight = [...]float64{mentions.Body: 0.3, mentions.Lead: 0.6, mentions.Title: 1}

// cos is cos(enc(Q), enc(D)); 0 for a fetched document without a vector.
func (d reachedDoc) cos() float64 {
	if d.doc == nil {
		return d.cosQD
	}
	if len(d.doc.Vector) == 0 {
		return 0
	}
	return d.qc.Cosine(d.doc.Vector)
}

// entityDocuments are the documents of the graphMaxEntities best reached
// entities. An entity's document is the document whose ID is its QID (the
// convention of the entity-page corpora, codexm and codexm-film). Index
// errors are returned.
func (c Channel) entityDocuments(ctx context.Context, qvec []float32, w Walk, tr chanio.Trace) (documents, error) {
	paths := w.Reached
	if len(paths) > graphMaxEntities {
		paths = paths[:graphMaxEntities]
	}
	ids := make([]string, len(paths))
	pathOf := make(map[string]pathrel.Path, len(paths))
	for i, p := range paths {
		ids[i], pathOf[p.Entity] = p.Entity, p
	}
	bridged, bridges, err := c.bridges(ctx, paths, pathOf, tr)
	if err != nil {
		return documents{}, err
	}
	ids = append(ids, bridged...)
	if _, ok := c.Docs.(retrieval.CosineReader); ok {
		docs := make([]reachedDoc, len(ids))
		for i, id := range ids {
			_, b := bridges[id]
			docs[i] = reachedDoc{id: id, bridged: b}
		}
		return documents{docs: docs, pathOf: pathOf, bridges: bridges, pending: true}, nil
	}
	docs, err := c.reachedDocuments(ctx, qvec, ids)
	if err != nil {
		return documents{}, err
	}
	for i := range docs {
		_, docs[i].bridged = bridges[docs[i].id]
	}
	c.noDocuments(len(docs), len(paths), tr)
	return documents{docs: docs, pathOf: pathOf, bridges: bridges}, nil
}

// bridges are the documents that mention the best graphBridgeEntities
// reached entities (graph_mentions; none without a mention index): each
// document's best bridge, its path to the mentioned entity in pathOf with
// the relevance scaled by the bridge's weight, and their IDs, best first,
// those not already an own page's. A document that is also a reached
// entity's own page keeps the better of the two. A failing mention index
// leaves the bridges out and says so.
func (c Channel) bridges(ctx context.Context, paths []pathrel.Path, pathOf map[string]pathrel.Path, tr chanio.Trace) ([]string, map[string]api.GraphBridge, error) {
	w := c.Mentions
	if w == 0 || c.MentionIndex == nil || len(paths) == 0 {
		return nil, nil, nil
	}
	paths = paths[:min(len(paths), graphBridgeEntities)]
	qids := make([]string, len(paths))
	for i, p := range paths {
		qids[i] = p.Entity
	}
	found, err := c.MentionIndex.Mentioning(ctx, qids, graphBridgeDocs)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		tr.Fallback("graph_mentions_unavailable", "reading the documents that mention the reached entities failed, the graph channel reaches their own pages only: "+err.Error())
		return nil, nil, nil
	}
	best := map[string]pathrel.Path{}
	bridges := map[string]api.GraphBridge{}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		idf := mentions.IDF(found.DF[p.Entity], found.N)
		for _, m := range found.Docs[p.Entity] {
			if m.Doc == p.Entity {
				continue // the entity's own page
			}
			b := api.GraphBridge{Entity: p.Entity, Place: m.Place.String(), IDF: idf, Weight: w * placeWeight[m.Place] * idf, PathRelevance: p.Relevance}
			bp := pathrel.Path{Entity: p.Entity, Steps: p.Steps, Relevance: p.Relevance * b.Weight}
			if cur, ok := best[m.Doc]; ok && !pathrel.Better(bp, cur) {
				continue
			}
			if own, ok := pathOf[m.Doc]; ok && own.Entity == m.Doc && !pathrel.Better(bp, own) {
				continue
			}
			best[m.Doc], bridges[m.Doc] = bp, b
		}
	}
	ids := make([]string, 0, len(best))
	for id := range best {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int {
		if best[a].Relevance != best[b].Relevance {
			if best[a].Relevance > best[b].Relevance {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	if len(ids) > graphBridgeKept {
		for _, id := range ids[graphBridgeKept:] {
			delete(bridges, id)
		}
		ids = ids[:graphBridgeKept]
	}
	out := ids[:0]
	for _, id := range ids {
		if _, own := pathOf[id]; !own {
			out = append(out, id) // an own page is listed already
		}
		pathOf[id] = best[id]
	}
	return out, bridges, nil
}

// noDocuments says so in the trace when n entities were reached and none
// has a document.
func (c Channel) noDocuments(docs, reached int, tr chanio.Trace) {
	if docs == 0 && reached > 0 && c.Filter.Empty() {
		tr.Fallback("graph_recall_no_documents", "no reachable entity has a document (no document ID is an entity's QID, and none mentions a reached entity): the graph channel adds nothing")
	}
}

// reachedDocuments are the documents of ids that pass the request's filter,
// in the order of ids, fetched whole (memindex: no copy, no wire), their
// cosines computed as needed. An index that computes cosines where the
// documents are (retrieval.CosineReader: Weaviate) sends only the cosines
// the ranking can need instead (cosines.go), and fetchKept fetches the
// few kept.
func (c Channel) reachedDocuments(ctx context.Context, qvec []float32, ids []string) ([]reachedDoc, error) {
	docs, err := c.Docs.Documents(ctx, ids)
	if err != nil {
		return nil, err
	}
	keep := c.Filter.Matcher()
	qc := vec.NewCosiner(qvec)
	out := make([]reachedDoc, 0, len(docs))
	for i := range docs {
		if keep(docs[i]) {
			out = append(out, reachedDoc{id: docs[i].ID, doc: &docs[i], qc: &qc})
		}
	}
	return out, nil
}

func set(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}
