// Package pathrel scores knowledge-graph paths against a question: how well
// the relations on the path from a query entity to another entity match what
// the question asks. A relation's text ("place of birth" forwards, "place of
// birth of" backwards) is embedded once per (encoder version, PID,
// direction) and cached; a path's relevance is the cosine of the question to
// its relation texts (docs/method.md, "Beyond the paper: graph recall").
package pathrel

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/vec"
)

// TwoHopPenalty is subtracted from a two-hop path's relevance (the mean of
// its two relations' cosines): a longer path is a weaker link.
//
// ViaBonus x ln(n) is added to the best two-hop path of an entity reached
// through n distinct intermediate entities: two-hop answers are usually
// reached many ways ("what language is <film> in": English through most of
// its cast), a wrong one mostly once.
//
// Both were chosen on kgqa train (docs/method.md, "Two hops, with evidence
// counted").
const (
	TwoHopPenalty = 0.25
	ViaBonus      = 0.07
)

// Step is one edge of a path, walked From -> To; Backward says the KG edge
// points the other way (To -[PID]-> From), and Relevance is cos(question,
// the relation's text in this direction). It is the API's GraphStep, so
// that the paths a response explains are the ones scored, without a copy.
type Step = api.GraphStep

// Path is the best path from a query entity to Entity.
type Path struct {
	Entity    string  `json:"entity"`
	Steps     []Step  `json:"steps"`
	Relevance float64 `json:"relevance"`
}

// Root is the query entity the path starts from.
func (p Path) Root() string {
	if len(p.Steps) == 0 {
		return p.Entity
	}
	return p.Steps[0].From
}

// appendStep appends the pieces of st's part of a path's String.
func appendStep(out []string, st Step) []string {
	l := st.Label
	if l == "" {
		l = st.PID
	}
	out = append(out, " -[", l)
	if st.Backward {
		out = append(out, " of")
	}
	return append(out, "]-> ", st.To)
}

// comparePieces compares the concatenations of a and b, as strings.Compare
// would, without building them: the pieces' overlapping runs are compared
// as strings (most are the same string, which compares at once).
func comparePieces(a, b []string) int {
	i, j, x, y := 0, 0, 0, 0 // piece and byte of a, of b
	for {
		for i < len(a) && x == len(a[i]) {
			i, x = i+1, 0
		}
		for j < len(b) && y == len(b[j]) {
			j, y = j+1, 0
		}
		switch {
		case i == len(a) && j == len(b):
			return 0
		case i == len(a):
			return -1
		case j == len(b):
			return 1
		}
		n := min(len(a[i])-x, len(b[j])-y)
		if c := strings.Compare(a[i][x:x+n], b[j][y:y+n]); c != 0 {
			return c
		}
		x, y = x+n, y+n
	}
}

// String is the path as text: Q1 -[place of birth]-> Q2.
func (p Path) String() string {
	s := p.Root()
	for _, st := range p.Steps {
		l := st.Label
		if l == "" {
			l = st.PID
		}
		if st.Backward {
			l += " of"
		}
		s += " -[" + l + "]-> " + st.To
	}
	return s
}

// Text is the relation text embedded for an edge walked in a direction.
func Text(label, pid string, backward bool) string {
	if label == "" {
		label = pid
	}
	if backward {
		return label + " of"
	}
	return label
}

// StepKey is a relation walked in a direction: Backward says against the
// KG edge.
type StepKey struct {
	PID      string
	Backward bool
}

// Prior is a learned question -> relation prior: for enc(Q), the
// probability of each (relation, direction) step leading to the answer.
// Steps it does not know are absent (probability 0).
type Prior interface {
	Prior(ctx context.Context, qvec []float32) (map[StepKey]float64, error)
}

// Relations embeds relation texts with an encoder and caches them by
// (encoder version, PID, direction). It is safe for concurrent use.
type Relations struct {
	enc scoring.Encoder
	// Directed: backwards edges get their own text ("... of"); otherwise a
	// relation has one text in both directions.
	Directed bool
	mu       sync.Mutex
	vecs     map[string][]float32
}

// NewRelations returns an empty cache over enc.
func NewRelations(enc scoring.Encoder, directed bool) *Relations {
	return &Relations{enc: enc, Directed: directed, vecs: map[string][]float32{}}
}

type relKey struct {
	pid, label string
	backward   bool
}

func (r *Relations) key(k relKey) string {
	return fmt.Sprintf("%s|%s|%t", r.enc.Version(), k.pid, k.backward && r.Directed)
}

// vectors returns the embeddings of keys, encoding the misses in one call.
func (r *Relations) vectors(ctx context.Context, keys []relKey) (map[relKey][]float32, error) {
	out := make(map[relKey][]float32, len(keys))
	var miss []relKey
	var texts []string
	r.mu.Lock()
	for _, k := range keys {
		if v, ok := r.vecs[r.key(k)]; ok {
			out[k] = v
			continue
		}
		miss = append(miss, k)
		texts = append(texts, Text(k.label, k.pid, k.backward && r.Directed))
	}
	r.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	vs, err := r.enc.Encode(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("encode relations: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, k := range miss {
		r.vecs[r.key(k)] = vs[i]
		out[k] = vs[i]
	}
	return out, nil
}

// Root is a start of the walk. Mentioned roots (Q's linked entities) are
// never returned: Q names them, so they are not its answer. A root taken from
// a search hit (graph_roots) is returned when another root reaches it: the
// page BM25 ranks first is often the answer itself ("what languages are
// spoken in greece": Greek), and excluding it lost it.
type Root struct {
	QID       string
	Mentioned bool
}

// Mentioned are qids as mentioned roots.
func Mentioned(qids ...string) []Root {
	out := make([]Root, len(qids))
	for i, q := range qids {
		out[i] = Root{QID: q, Mentioned: true}
	}
	return out
}

// Reach returns every entity reachable from the roots in their subgraphs
// (up to hops steps, 1 or 2) with its best path and that path's relevance,
// best first (ties by QID). A one-hop path's relevance is cos(q, relation);
// a two-hop path's is the mean of its two relations' cosines minus
// TwoHopPenalty, plus ViaBonus x ln(n) when the entity is reached through n
// distinct intermediates, and it never passes through a hub or a root. Mentioned
// roots are not returned; a root from a search hit is, when another root
// reaches it.
//
// prior, when not nil, is added to each step's cosine (already weighted by
// the caller): a step's relevance is cos(q, relation) + prior[step].
func (r *Relations) Reach(ctx context.Context, qvec []float32, starts []Root, subs map[string]kg.Subgraph, hops int, prior map[StepKey]float64) ([]Path, error) {
	if hops < 1 {
		return nil, nil
	}
	wk, err := r.Start(ctx, qvec, starts, subs, hops, prior)
	if err != nil {
		return nil, err
	}
	defer wk.Release()
	return wk.Paths(), nil
}

// Walk is a Reach in progress: Start walks the roots known so far, Extend
// the roots found later (the graph channel walks Q's linked entities while
// the search that gives its other roots runs), Paths are the best paths of
// the roots walked so far, and Release ends it. A Walk is used by one
// goroutine at a time.
type Walk struct {
	r    *Relations
	w    *walker
	qvec []float32
	hops int
}

// Start walks from starts as Reach does, and keeps the walk open for more
// roots. The caller ends it with Release.
func (r *Relations) Start(ctx context.Context, qvec []float32, starts []Root, subs map[string]kg.Subgraph, hops int, prior map[StepKey]float64) (*Walk, error) {
	wk := &Walk{r: r, w: newWalker(prior, r.Directed), qvec: qvec, hops: hops}
	if err := wk.add(ctx, starts, subs); err != nil {
		wk.Release()
		return nil, err
	}
	return wk, nil
}

// Extend walks more roots as though Start had been given them too. A walk
// that knows every root never goes through one and never reaches a
// mentioned one; where an earlier root's walk did either with one of
// more, Extend walks nothing and returns false: the caller starts over.
func (wk *Walk) Extend(ctx context.Context, more []Root, subs map[string]kg.Subgraph) (bool, error) {
	w := wk.w
	for _, q := range more {
		if s, ok := w.slot[q.QID]; ok && (w.ents[s].through || q.Mentioned && w.ents[s].best >= 0) {
			return false, nil
		}
	}
	return true, wk.add(ctx, more, subs)
}

// add marks starts as roots and walks from each, the relevances of their
// subgraphs' relations read first, in one encoder call for those not
// cached.
func (wk *Walk) add(ctx context.Context, starts []Root, subs map[string]kg.Subgraph) error {
	w := wk.w
	roots := make([]string, len(starts))
	for i, q := range starts {
		roots[i] = q.QID
		s := w.intern(q.QID)
		w.ents[s].isRoot = true
		w.ents[s].mentioned = w.ents[s].mentioned || q.Mentioned
	}
	if wk.hops < 1 {
		return nil
	}
	if err := wk.r.relevances(ctx, wk.qvec, roots, subs, w.rel); err != nil {
		return err
	}
	for _, q := range roots {
		sg, ok := subs[q]
		if !ok {
			continue
		}
		w.walk(sg, q, wk.hops)
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Paths are the best paths of the roots walked so far, as Reach returns
// them; new slices, which Release leaves alone.
func (wk *Walk) Paths() []Path { return wk.w.paths() }

// Release ends the walk; a second call does nothing.
func (wk *Walk) Release() {
	if wk.w != nil {
		wk.w.release()
		wk.w = nil
	}
}

// Warm embeds the relation texts of every edge of subs that the cache
// lacks, in one encoder call, and returns how many relation texts are
// cached: a server warms it at start so that first requests do not pay for
// it.
func (r *Relations) Warm(ctx context.Context, subs map[string]kg.Subgraph) (int, error) {
	roots := make([]string, 0, len(subs))
	for q := range subs {
		roots = append(roots, q)
	}
	if _, err := r.vectors(ctx, r.edgeKeys(roots, subs)); err != nil {
		return 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.vecs), nil
}

// relevances adds to rel cos(q, text) of every relation text on the
// roots' subgraphs' edges that rel lacks (one encoder call for those not
// cached), by key.
func (r *Relations) relevances(ctx context.Context, qvec []float32, roots []string, subs map[string]kg.Subgraph, rel map[relKey]float64) error {
	vecs, err := r.vectors(ctx, r.edgeKeys(roots, subs))
	if err != nil {
		return err
	}
	for k, v := range vecs {
		if _, ok := rel[k]; !ok {
			rel[k] = vec.Cosine64(qvec, v)
		}
	}
	return nil
}

// edgeKeys are the distinct relation keys of the roots' subgraph edges, in
// both directions when r is directed.
func (r *Relations) edgeKeys(roots []string, subs map[string]kg.Subgraph) []relKey {
	dirs := []bool{false}
	if r.Directed {
		dirs = []bool{false, true}
	}
	var keys []relKey
	seenKey := map[relKey]bool{}
	var last relKey
	for _, q := range roots {
		for _, e := range subs[q].Edges {
			for _, b := range dirs {
				k := relKey{pid: e.PID, label: e.Label, backward: b}
				if len(keys) > 0 && k == last {
					continue // edges come sorted by head, then property: runs repeat
				}
				last = k
				if !seenKey[k] {
					seenKey[k] = true
					keys = append(keys, k)
				}
			}
		}
	}
	return keys
}

// Better orders paths as Reach does: higher relevance, then the path's
// text.
func Better(a, b Path) bool {
	if a.Relevance != b.Relevance {
		return a.Relevance > b.Relevance
	}
	return a.String() < b.String()
}
