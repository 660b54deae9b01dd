// Package memindex is dmar's embedded search index: BM25 (k1=1.2, b=0.75, as
// Weaviate), exact cosine vector search, and hybrid search with Weaviate's two
// fusions, all in process. It implements retrieval.Index and retrieval.Writer
// and saves its documents (with their links and vectors) to a snapshot file.
package memindex

import (
	"context"
	"encoding/gob"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/vec"
)

var (
	_ retrieval.Index        = (*Index)(nil)
	_ retrieval.Writer       = (*Index)(nil)
	_ retrieval.CosineReader = (*Index)(nil)
)

// Params are BM25's parameters and hybrid search's fusion parameters.
type Params struct {
	K1, B float64
	// HybridCandidates is how many hits each sub-search of a hybrid search
	// fetches before fusion (at least the requested limit).
	HybridCandidates int
	// RankedFusionK is the constant k of rankedFusion (weighted reciprocal
	// rank fusion): a hit at 0-based rank r of a list with weight w scores
	// w/(k+r). Weaviate fixes it at 60 (DefaultRankedFusionK, the value in
	// DefaultParams); 0 also means 60. Only a different value changes
	// rankedFusion's scores, and rankings that then differ from Weaviate's.
	RankedFusionK int
	// Classic scores title + " " + text as one field with textbook BM25
	// (Lucene's). Off by default: the index then scores as Weaviate 1.35 does
	// (see bm25.go), so that rankings do not change in production.
	Classic bool
	// WeaviateTopK also copies Weaviate's cut of BM25 candidates: each field
	// keeps only its best max(⌊1.1·L⌋, L+10) documents before the fields are
	// summed, so a document outside, say, the title's best loses its title
	// score. L is what Weaviate is asked for: the limit plus WeaviateTieSlack
	// for BM25 search (the weaviate adapter asks for that many more to order
	// ties), max(HybridCandidates, limit) for hybrid's keyword half.
	// Weaviate cuts per segment; with one segment per property (after its
	// compactions) the copy is exact. On in DefaultParams, for rankings that
	// stay the same in production (docs/weaviate.md); off, scores are the
	// exact sums Weaviate approximates.
	WeaviateTopK bool
	// ANNMin is the number of documents from which an unfiltered vector
	// search (and hybrid search's vector half) takes the approximate
	// vector graph (HNSW) instead of the exact scan (ann.go): 0 means
	// DefaultANNMin, a negative value never.
	ANNMin int
	// ANNEf is how many candidates a search of the vector graph explores
	// (at least its limit): more is slower and misses fewer documents.
	// 0 means the default for the graph's size: DefaultANNEf up to
	// 128,000 documents, more above (800 at 1,000,000; ann.go).
	ANNEf int
	// MaxScore prunes BM25's postings with MaxScore's bounds (maxscore.go):
	// the same results to the bit, measured slower on the corpora here.
	MaxScore bool
	// CompactVectors keeps each document's vector in memory as an int8
	// code, and the float32 vector in a file (vecstore.go): searches rank
	// with the codes and score their best candidates again in float32, so
	// the scores are the float32 index's; the ranking can differ only
	// where a document the codes rank outside those candidates would have
	// made the top. Off by default. An index made with it should be
	// closed (Close) to give the file back.
	CompactVectors bool
	// VectorDir is the directory of CompactVectors' file (os.TempDir()
	// when empty).
	VectorDir string
}

// WeaviateTieSlack is how many hits beyond the limit the weaviate adapter
// asks Weaviate for (internal/retrieval/weaviate checks it is the same).
const WeaviateTieSlack = 8

// DefaultRankedFusionK is Weaviate's reciprocal-rank constant k in
// rankedFusion, w/(k+rank): 60, not configurable on the server.
const DefaultRankedFusionK = 60

// DefaultParams match Weaviate's defaults.
func DefaultParams() Params {
	return Params{K1: 1.2, B: 0.75, HybridCandidates: 100, RankedFusionK: DefaultRankedFusionK, WeaviateTopK: true}
}

// Index is safe for concurrent use, and searches never wait for writes:
// the index is a chain of immutable generations. A write (Put, Delete)
// copies the current generation's document and id tables, shares the
// rest (posting maps in layers, postings.go; posting lists until it first
// touches them; what searches prepared, patched, prepare.go), applies the
// whole batch and publishes it with one atomic store; a search reads the
// generation it started with from beginning to end. So a search sees each
// batch wholly or not at all, and documents arrive linked and embedded, so
// no model call is ever made under the writers' mutex either.
type Index struct {
	params Params
	store  *vecStore  // the float32 vectors when CompactVectors, else nil
	wmu    sync.Mutex // one writer at a time
	cur    atomic.Pointer[gen]
	// prepareAfresh turns inherit off and flatPostings the posting maps'
	// layers (SetSharing), so that a benchmark measures both ways with one
	// binary.
	prepareAfresh, flatPostings atomic.Bool
}

// gen is one generation of the index; published generations are never
// modified.
type gen struct {
	params Params
	// docs are slots in insertion order; a deleted document leaves an empty
	// slot (ID "") until compact drops the holes. Slot order is the order a
	// fresh build over All() would give, so rankings (whose ties follow it)
	// do not depend on the history of writes.
	docs []retrieval.Document
	// vecs are the slots' compact vectors when CompactVectors (the
	// documents in docs then hold no vector), read from store.
	vecs  []cvec
	store *vecStore
	byID  map[string]int32
	dead  int // empty slots
	// one inverted field per scored property (title and text), or one for
	// title + text when Classic, kept up to date by every write.
	fields []field
	// owned are the posting lists this generation has copied, while it is
	// being written (nil once published).
	owned map[ownKey]struct{}
	// changed are the slots this generation's write touched (possibly
	// repeated) and renumbered says it compacted: what inherit needs to
	// patch the parent's prepared parts (nil and false once published).
	changed    []int32
	renumbered bool
	// staleBlocks are lists the write left alone whose block bounds it
	// made stale (a document's length changed); nil once published.
	staleBlocks []ownKey
	prep        prepared // what searches derive from this generation (prepare.go); clone must leave it zero
}

type ownKey struct {
	field int
	term  string
}

// posting is one document's count of a term in a field: a whole number,
// held exactly in a float32 (8 bytes a posting instead of 16) and scored as
// a float64, as it always was.
type posting struct {
	doc int32
	tf  float32
}

// New returns an empty index.
func New(p Params) *Index {
	x := &Index{params: p}
	if p.CompactVectors {
		x.store = &vecStore{dir: p.VectorDir}
	}
	x.cur.Store(&gen{params: p, store: x.store, byID: map[string]int32{}, fields: newFields(p.Classic)})
	return x
}

// Close gives back the file of CompactVectors' float32 vectors; the index
// cannot be searched or written after. Without CompactVectors it does
// nothing.
func (x *Index) Close() error {
	if x.store == nil {
		return nil
	}
	return x.store.close()
}

// update applies a write to a copy of the current generation, patches
// what the parent had prepared for searches, and publishes it.
func (x *Index) update(write func(g *gen)) {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	parent := x.cur.Load()
	g := parent.clone(!x.flatPostings.Load())
	write(g)
	if !x.prepareAfresh.Load() {
		g.inherit(parent)
	}
	g.owned, g.changed, g.renumbered, g.staleBlocks = nil, nil, false, nil
	x.cur.Store(g)
}

// Sharing says what a write shares with its parent generation instead of
// making it again: Prepared, what the parent prepared for searches (norms,
// length terms, blocks), patched in the slots the write changed (else the
// new generation's first search prepares it from scratch); Postings, the
// posting maps, in layers (else every write copies them whole). Both are
// on by default; benchmarks turn them off to measure what they save.
// Results are the same either way.
type Sharing struct{ Prepared, Postings bool }

// SetSharing sets what later writes share with their parent generation.
func (x *Index) SetSharing(s Sharing) {
	x.prepareAfresh.Store(!s.Prepared)
	x.flatPostings.Store(!s.Postings)
}

// clone copies g's tables for a write; posting lists stay shared until
// the write first touches them (own), and the posting maps are forked in
// layers when layered.
func (x *gen) clone(layered bool) *gen {
	n := &gen{params: x.params, docs: slices.Clone(x.docs), vecs: slices.Clone(x.vecs), store: x.store, byID: maps.Clone(x.byID), dead: x.dead,
		fields: make([]field, len(x.fields)), owned: map[ownKey]struct{}{}}
	for i, f := range x.fields {
		f.postings = f.postings.fork(layered)
		f.length = slices.Clone(f.length)
		n.fields[i] = f
	}
	return n
}

// own reports whether the generation being written already holds its own
// copy of a posting list, and marks it as owned from now on.
func (x *gen) own(field int, term string) bool {
	k := ownKey{field, term}
	if _, ok := x.owned[k]; ok {
		return true
	}
	x.owned[k] = struct{}{}
	return false
}

// Put implements retrieval.Writer: documents with an existing ID replace it
// (keeping its place). A batch is applied wholly or, on a document without
// an ID, not at all.
func (x *Index) Put(ctx context.Context, docs []retrieval.Document) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, d := range docs {
		if d.ID == "" {
			return errs.E(errs.Invalid, "document without id")
		}
	}
	var cvs []cvec
	if x.store != nil {
		// The vectors go to the file before the writers' lock, as
		// tokenising does; a failed batch leaves unused records.
		var err error
		if cvs, err = x.store.appendDocs(ctx, docs); err != nil {
			return fmt.Errorf("put: %w", err)
		}
	}
	if len(docs) <= bulkChunk {
		// Tokenising is the slow part of a write; it is done before the copy.
		terms := tokenizeAll(x.cur.Load(), docs)
		x.update(func(g *gen) { g.put(docs, terms, cvs) })
		return nil
	}
	// A bulk load is tokenised a chunk at a time under the writer's lock:
	// a document's term counts take a few kilobytes, so a million documents
	// tokenised ahead held gigabytes only to drop them.
	x.update(func(g *gen) {
		for lo := 0; lo < len(docs); lo += bulkChunk {
			hi := min(lo+bulkChunk, len(docs))
			var cv []cvec
			if cvs != nil {
				cv = cvs[lo:hi]
			}
			g.put(docs[lo:hi], tokenizeAll(g, docs[lo:hi]), cv)
		}
		g.trimPostings()
	})
	return nil
}

// bulkChunk is how many documents a large Put tokenises at a time.
const bulkChunk = 8192

// tokenizeAll tokenises docs for generation g's fields, a part per CPU.
func tokenizeAll(g *gen, docs []retrieval.Document) [][]docTerms {
	terms := make([][]docTerms, len(docs))
	parallel(len(docs), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			terms[i] = g.tokenize(docs[i])
		}
	})
	return terms
}

// put applies docs (terms their tokens, cvs their compact vectors when
// CompactVectors) to the generation being written.
func (x *gen) put(docs []retrieval.Document, terms [][]docTerms, cvs []cvec) {
	for i, d := range docs {
		if cvs != nil {
			d.Vector = nil // in the file now
		}
		if slot, ok := x.byID[d.ID]; ok {
			x.reindex(slot, terms[i])
			x.docs[slot] = d
			if cvs != nil {
				x.vecs[slot] = cvs[i]
			}
			continue
		}
		slot := int32(len(x.docs))
		x.byID[d.ID] = slot
		x.docs = append(x.docs, d)
		if cvs != nil {
			x.vecs = append(x.vecs, cvs[i])
		}
		x.index(slot, terms[i])
	}
}

// trimPostings cuts the posting lists this write grew by appending down to
// their length: after a bulk load up to half of a list's memory was room
// for growth that only later writes would use.
func (x *gen) trimPostings() {
	for k := range x.owned {
		f := &x.fields[k.field]
		if ps := f.postings.get(k.term); cap(ps)-len(ps) > len(ps)/8 {
			f.postings.set(k.term, slices.Clone(ps))
		}
	}
}

// Delete removes the documents with these IDs; unknown IDs are ignored. It
// returns how many were removed.
func (x *Index) Delete(ctx context.Context, ids []string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n := 0
	x.update(func(g *gen) {
		for _, id := range ids {
			slot, ok := g.byID[id]
			if !ok {
				continue
			}
			g.unindex(slot)
			g.docs[slot] = retrieval.Document{}
			if g.store != nil {
				g.vecs[slot] = cvec{}
			}
			delete(g.byID, id)
			g.dead++
			n++
		}
		if g.dead > 1024 && g.dead > len(g.byID) {
			g.compact()
		}
	})
	return n, nil
}

// Count implements retrieval.Writer.
func (x *Index) Count(ctx context.Context) (int, error) {
	return len(x.cur.Load().byID), ctx.Err()
}

// All returns every document, in insertion order. Callers must not modify
// them. With CompactVectors the vectors are read from their file, and All
// panics when that fails (ReadAll returns the error).
func (x *Index) All() []retrieval.Document {
	out, err := x.ReadAll(context.Background())
	if err != nil {
		panic(err)
	}
	return out
}

// ReadAll is All, with the error of reading CompactVectors' file.
func (x *Index) ReadAll(ctx context.Context) ([]retrieval.Document, error) {
	g := x.cur.Load()
	if g.dead == 0 && g.store == nil {
		return g.docs, nil
	}
	out := make([]retrieval.Document, 0, len(g.byID))
	var r vecReader
	for i, d := range g.docs {
		if d.ID == "" {
			continue
		}
		if g.store != nil {
			if i%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			var err error
			if d, err = g.withVector(i, &r, true); err != nil {
				return nil, err
			}
		}
		out = append(out, d)
	}
	return out, nil
}

// Documents implements retrieval.Index.
func (x *Index) Documents(ctx context.Context, ids []string) ([]retrieval.Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g := x.cur.Load()
	out := make([]retrieval.Document, 0, len(ids))
	var r vecReader
	for _, id := range ids {
		if i, ok := g.byID[id]; ok {
			d, err := g.withVector(int(i), &r, true)
			if err != nil {
				return nil, fmt.Errorf("documents: %w", err)
			}
			out = append(out, d)
		}
	}
	return out, nil
}

// Cosines is cos(v, D) of every document among ids that f passes (unknown
// ids are absent), computed as the graph channel computes it from a fetched
// document's vector (vec.Cosiner), so that the channel ranks the same
// either way. The channel scores up to 2,000 reached documents a request:
// handing each over copied its vector (read from the file, with
// CompactVectors), about 1.6 MB a request that the collector then had to
// find, where this reads each into one reused buffer.
func (x *Index) Cosines(ctx context.Context, v []float32, ids []string, f retrieval.Filter) (map[string]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g := x.cur.Load()
	keep := f.Matcher()
	out := make(map[string]float64, len(ids))
	if g.store != nil {
		qc := vec.NewCosiner(v)
		var r vecReader
		for _, id := range ids {
			i, ok := g.byID[id]
			if !ok || !keep(g.docs[i]) {
				continue
			}
			dv, err := g.float32At(int(i), &r)
			if err != nil {
				return nil, fmt.Errorf("cosines: %w", err)
			}
			out[id] = qc.Cosine(dv)
		}
		return out, nil
	}
	// vec.Cosine's values, bit for bit, from the stored norms and four
	// dot products at a time (vec.Dot4): about a third of the work.
	qn, norms := vec.Norm(v), g.norms()
	cos := func(slot int32, dot float32) float64 {
		if nb := norms[slot]; qn != 0 && nb != 0 {
			return float64(dot) / (qn * nb)
		}
		return 0
	}
	var four [4]int32
	n := 0
	for _, id := range ids {
		i, ok := g.byID[id]
		if !ok || !keep(g.docs[i]) {
			continue
		}
		if len(v) == 0 || len(g.docs[i].Vector) != len(v) {
			out[id] = 0 // as vec.Cosine has it
			continue
		}
		four[n] = i
		n++
		if n < 4 {
			continue
		}
		d := &g.docs
		s0, s1, s2, s3 := vec.Dot4(v, (*d)[four[0]].Vector, (*d)[four[1]].Vector, (*d)[four[2]].Vector, (*d)[four[3]].Vector)
		for k, dot := range [4]float32{s0, s1, s2, s3} {
			out[(*d)[four[k]].ID] = cos(four[k], dot)
		}
		n = 0
	}
	for _, i := range four[:n] {
		out[g.docs[i].ID] = cos(i, vec.Dot(v, g.docs[i].Vector))
	}
	return out, nil
}

// vecReader holds a reader's buffers for the vector file.
type vecReader struct {
	buf []float32
	raw []byte
}

// float32At is slot i's float32 vector (nil without one): the document's
// own, or with CompactVectors read from the file into r's buffer, valid
// until r's next read.
func (x *gen) float32At(i int, r *vecReader) ([]float32, error) {
	if x.store == nil {
		return x.docs[i].Vector, nil
	}
	c := &x.vecs[i]
	if c.dim() == 0 {
		return nil, nil
	}
	v, raw, err := x.store.read(c, r.buf, r.raw)
	r.buf, r.raw = v, raw
	if err != nil {
		return nil, fmt.Errorf("document %q: %w", x.docs[i].ID, err)
	}
	return v, nil
}

// withVector is slot i's document with its vector when want (read from
// the file, a copy of its own, with CompactVectors), else without one.
func (x *gen) withVector(i int, r *vecReader, want bool) (retrieval.Document, error) {
	d := x.docs[i]
	if !want {
		d.Vector = nil
		return d, nil
	}
	if x.store == nil {
		return d, nil
	}
	v, err := x.float32At(i, r)
	if err != nil {
		return d, err
	}
	d.Vector = slices.Clone(v)
	return d, nil
}

// dim is slot i's vector dimension (0 without one).
func (x *gen) dim(i int) int {
	if x.store != nil {
		return x.vecs[i].dim()
	}
	return len(x.docs[i].Vector)
}

// vecNorm is slot i's vector norm (vec.Norm of the float32 vector).
func (x *gen) vecNorm(i int) float64 {
	if x.store != nil {
		return x.vecs[i].norm
	}
	return vec.Norm(x.docs[i].Vector)
}

// allowed returns nil when the filter restricts nothing.
func (x *gen) allowed(f retrieval.Filter) []bool {
	if f.Empty() {
		return nil
	}
	ok := make([]bool, len(x.docs))
	ids := map[string]bool{}
	for _, id := range f.IDs {
		ids[id] = true
	}
	ents := map[string]bool{}
	for _, q := range f.AnyEntities {
		ents[q] = true
	}
	for i, d := range x.docs {
		if d.ID == "" {
			continue
		}
		pass := len(ids) == 0 || ids[d.ID]
		if pass && len(ents) > 0 {
			pass = false
			for _, e := range d.Entities {
				if ents[e] {
					pass = true
					break
				}
			}
		}
		ok[i] = pass
	}
	return ok
}

// Build makes ahead of the first search what searches derive from the
// current documents (norms, BM25's length terms, the vectors' blocks or, for
// a large corpus, the vector graph), so that no request pays for it. When
// ctx ends first it returns ctx's error; the graph's build goes on for the
// searches after.
func (x *Index) Build(ctx context.Context) error {
	g := x.cur.Load()
	g.norms()
	g.lengthTerms()
	switch {
	case g.useANN():
		if _, err := g.annCtx(ctx); err != nil {
			return fmt.Errorf("build the vector graph: %w", err)
		}
	case haveDot32 && g.store == nil:
		g.blocks()
	}
	return nil
}

// Save writes the documents (with links and vectors) to path atomically.
func (x *Index) Save(path string) error {
	g := x.cur.Load()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("save index: %w", err)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("save index: %w", err)
	}
	type stored struct {
		ID, Title, Text string
		Entities        []string
		Vector          []float32
	}
	out := make([]stored, 0, len(g.byID))
	var r vecReader
	for i, d := range g.docs {
		if d.ID != "" {
			d, err := g.withVector(i, &r, true)
			if err != nil {
				f.Close()
				os.Remove(tmp)
				return fmt.Errorf("save index: %w", err)
			}
			out = append(out, stored{d.ID, d.Title, d.Text, d.Entities, d.Vector})
		}
	}
	if err := gob.NewEncoder(f).Encode(out); err != nil {
		f.Close()
		return fmt.Errorf("save index: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("save index: %w", err)
	}
	return os.Rename(tmp, path)
}

// Load reads an index saved by Save.
func Load(path string, p Params) (*Index, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load index: %w", err)
	}
	defer f.Close()
	var in []struct {
		ID, Title, Text string
		Entities        []string
		Vector          []float32
	}
	if err := gob.NewDecoder(f).Decode(&in); err != nil {
		return nil, fmt.Errorf("load index %s: %w", path, err)
	}
	x := New(p)
	docs := make([]retrieval.Document, len(in))
	for i, d := range in {
		docs[i] = retrieval.Document{ID: d.ID, Title: d.Title, Text: d.Text, Entities: d.Entities, Vector: d.Vector}
	}
	if err := x.Put(context.Background(), docs); err != nil {
		return nil, err
	}
	if err := x.Build(context.Background()); err != nil {
		return nil, err
	}
	return x, nil
}
