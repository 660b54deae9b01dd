package kgchan

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// scored is the scores stage's output: the graph_recall_k best documents
// by graph score, best first, their scores, and which of them hold only
// their ID so far (their cosines came from the index).
type scored struct {
	hits      []retrieval.Hit
	paths     map[string]api.GraphPath // by document ID, for at least the kept ones
	pathOf    map[string]pathrel.Path
	bridges   map[string]api.GraphBridge
	unfetched map[string]bool
}

// scoreDocuments gives each document its graph score: the path's
// relevance, graph_weight x cos(enc(Q), enc(D)), the entity's popularity
// (pop), and keeps the graph_recall_k best, best first (ties by ID).
func (c Channel) scoreDocuments(d documents, pop map[string]float64) scored {
	o := c.Options
	// Only the graph_recall_k best are kept: a document whose score cannot
	// reach the k-th best so far, whatever its cosine, is passed over
	// (documents come best path first, so most are). The bound is strict,
	// so the kept ones are those of the full ranking. Hits and paths are
	// made for the kept ones only.
	type passed struct {
		doc *reachedDoc
		gp  api.GraphPath
	}
	var ps []passed
	floor := newScoreFloor(o.K)
	reach := cosineReach(o.Weight)
	for i := range d.docs {
		doc := &d.docs[i]
		gp := c.pathScore(d.pathOf[doc.id], pop[doc.id])
		if floor.below(scoreBound(gp, reach)) {
			continue
		}
		gp.Score = withCosine(gp, o.Weight, doc.cos())
		floor.add(gp.Score)
		ps = append(ps, passed{doc, gp})
	}
	// Documents are distinct, so the order is total.
	slices.SortFunc(ps, func(a, b passed) int {
		if a.gp.Score != b.gp.Score {
			return cmp.Compare(b.gp.Score, a.gp.Score)
		}
		return strings.Compare(a.doc.id, b.doc.id)
	})
	ps = ps[:min(len(ps), o.K)]
	sc := scored{hits: make([]retrieval.Hit, len(ps)), paths: make(map[string]api.GraphPath, len(ps)), pathOf: d.pathOf, bridges: d.bridges, unfetched: map[string]bool{}}
	for i, p := range ps {
		sc.paths[p.doc.id] = p.gp
		hit := retrieval.Document{ID: p.doc.id}
		if p.doc.doc != nil {
			hit = *p.doc.doc
		} else {
			sc.unfetched[p.doc.id] = true
		}
		sc.hits[i] = retrieval.Hit{Doc: hit, Score: p.gp.Score}
	}
	return sc
}

// pathScore is a reached document's graph path scored without its cosine:
// Score the path's relevance (0 in the ablation without relations), and
// its entity's popularity.
func (c Channel) pathScore(p pathrel.Path, pop float64) api.GraphPath {
	gp := api.GraphPath{Steps: p.Steps, Relevance: p.Relevance, Score: p.Relevance}
	if c.Relations == "none" {
		gp.Score = 0 // the ablation: the document's cosine alone ranks
	}
	gp.Popularity = pop
	return gp
}

// cosineReach is the most the cosine term adds to a graph score.
func cosineReach(graphWeight float64) float64 { return math.Abs(graphWeight)*(1+1e-9) + 1e-12 }

// scoreBound is the most gp's graph score can be with its cosine term.
func scoreBound(gp api.GraphPath, reach float64) float64 { return gp.Score + gp.Popularity + reach }

// withCosine is gp's graph score with its cosine term and popularity.
func withCosine(gp api.GraphPath, graphWeight, cos float64) float64 {
	s := gp.Score + graphWeight*cos
	s += gp.Popularity
	return s
}

// keptPaths is the paths stage: the kept documents fetched where only
// their IDs are held, each with its path and its path's text. Index errors
// are returned.
func (c Channel) keptPaths(ctx context.Context, sc scored) (Output, error) {
	hits, err := c.fetchKept(ctx, sc.hits, sc.unfetched)
	if err != nil {
		return Output{}, err
	}
	paths := sc.paths
	if len(paths) > len(hits) {
		paths = make(map[string]api.GraphPath, len(hits))
		for _, h := range hits {
			paths[h.Doc.ID] = sc.paths[h.Doc.ID]
		}
	}
	// The paths' texts, for the documents kept only.
	for i, h := range hits {
		gp := paths[h.Doc.ID]
		gp.Path = sc.pathOf[h.Doc.ID].String()
		hits[i].Explain = fmt.Sprintf("kg: %s (relevance %.3f)", gp.Path, gp.Relevance)
		if b, ok := sc.bridges[h.Doc.ID]; ok {
			gp.Bridge = &b
			hits[i].Explain = fmt.Sprintf("kg: %s; this document mentions %s in its %s (relevance %.3f x weight %.3f: place, idf %.3f)",
				gp.Path, b.Entity, b.Place, b.PathRelevance, b.Weight, b.IDF)
		}
		paths[h.Doc.ID] = gp
	}
	return Output{Hits: hits, Paths: paths}, nil
}

// popularity is graph_popularity x ln(1 + degree) of each document's
// entity, by document ID; empty when the option is off. The degrees are
// the neighbourhoods' when the graph read them with those (degrees), else
// they come in one call (c.degrees); when that fails the channel ranks
// without them and the trace says so.
func (c Channel) popularity(ctx context.Context, docs []reachedDoc, degrees map[string]int, tr chanio.Trace) (map[string]float64, error) {
	w := c.Popularity
	if w == 0 || len(docs) == 0 {
		return nil, nil
	}
	if degrees != nil {
		out := make(map[string]float64, len(docs))
		for _, d := range docs {
			if deg, ok := degrees[d.id]; ok && !d.bridged {
				out[d.id] = w * math.Log1p(float64(deg))
			}
		}
		return out, nil
	}
	ids := make([]string, 0, len(docs))
	for _, d := range docs {
		if !d.bridged { // a bridged document's entity is the one it mentions
			ids = append(ids, d.id)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	deg, err := c.degrees(ctx, ids)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		tr.Fallback("graph_unavailable", "reading the reached entities' degrees failed, the graph channel ranks without popularity: "+err.Error())
		return nil, nil
	}
	out := make(map[string]float64, len(deg))
	for id, d := range deg {
		out[id] = w * math.Log1p(float64(d))
	}
	return out, nil
}

// degrees are the degrees of ids the graph knows: read alone where the
// graph can (kg.DegreeReader), else from Entities.
func (c Channel) degrees(ctx context.Context, ids []string) (map[string]int, error) {
	if dr, ok := c.Graph.(kg.DegreeReader); ok {
		return dr.Degrees(ctx, ids)
	}
	ents, err := c.Graph.Entities(ctx, ids)
	if err != nil {
		return nil, err
	}
	deg := make(map[string]int, len(ents))
	for id, e := range ents {
		deg[id] = e.Degree
	}
	return deg, nil
}

// fetchKept gives the kept hits that hold only their ID (unfetched: their
// cosines came from the index) their documents, in one Documents call; a
// document deleted since is dropped.
func (c Channel) fetchKept(ctx context.Context, hits []retrieval.Hit, unfetched map[string]bool) ([]retrieval.Hit, error) {
	var ids []string
	for _, h := range hits {
		if unfetched[h.Doc.ID] {
			ids = append(ids, h.Doc.ID)
		}
	}
	if len(ids) == 0 {
		return hits, nil
	}
	docs, err := c.Docs.Documents(ctx, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]retrieval.Document, len(docs))
	for _, d := range docs {
		byID[d.ID] = d
	}
	out := hits[:0]
	for _, h := range hits {
		if unfetched[h.Doc.ID] {
			d, ok := byID[h.Doc.ID]
			if !ok {
				continue
			}
			h.Doc = d
		}
		out = append(out, h)
	}
	return out, nil
}

// scoreFloor is the k-th best of the scores added so far (a min-heap of
// the k best): below reports whether a score is less than it, so that a
// document with no better bound cannot be among the k best.
type scoreFloor struct {
	k    int
	heap []float64
}

func newScoreFloor(k int) *scoreFloor { return &scoreFloor{k: k, heap: make([]float64, 0, max(k, 0))} }

func (f *scoreFloor) below(bound float64) bool {
	return f.k <= 0 || (len(f.heap) == f.k && bound < f.heap[0])
}

func (f *scoreFloor) add(s float64) {
	h := f.heap
	if f.k <= 0 {
		return
	}
	if len(h) < f.k {
		h = append(h, s)
		for i := len(h) - 1; i > 0 && h[(i-1)/2] > h[i]; i = (i - 1) / 2 {
			h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
		}
		f.heap = h
		return
	}
	if s <= h[0] {
		return
	}
	h[0] = s
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(h) && h[l] < h[m] {
			m = l
		}
		if l+1 < len(h) && h[l+1] < h[m] {
			m = l + 1
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
