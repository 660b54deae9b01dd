package memindex

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// prepared is what searches derive from one generation: the vector norms,
// BM25's length terms and the vectors' blocks. Each is made by the first
// search that needs it, unless the write that published the generation
// found it ready in its parent and patched a copy (inherit): the parts
// then share what the write did not change, and a writer publishing
// generations back to back no longer makes every search of the corpus
// rebuild them (about 30 ms on codexm's 16,352 documents, against a
// search of about 1.3 ms).
type prepared struct {
	norms  lazy[[]float64]   // each slot's vector norm, 0 without a vector
	kn     lazy[[][]float64] // per field and slot, k1·(1 - b + b·len/avg)
	blocks lazy[*blocks]     // nil when the CPU has no dot32 kernel or the vectors no one dimension
	bmax   blockCache        // the block bounds of BM25's posting lists (blockmax.go)
	ann    lazy[*hnsw]       // the vector graph of a large corpus (ann.go), shared with the generations after
}

// lazy is a value made once per generation, either before it is published
// (set) or by the first search that asks for it (get).
type lazy[T any] struct {
	once  sync.Once
	asked atomic.Bool // a search asked for it: it is made or being made
	v     atomic.Pointer[T]
}

func (l *lazy[T]) get(build func() T) T {
	if p := l.v.Load(); p != nil {
		return *p
	}
	l.asked.Store(true)
	l.once.Do(func() {
		v := build()
		l.v.Store(&v)
	})
	return *l.v.Load()
}

// getCtx is get for a caller that stops waiting when ctx ends: the value
// is still made, for the callers after (a large graph takes minutes, and
// a request's deadline or a shutdown must not wait for it).
func (l *lazy[T]) getCtx(ctx context.Context, build func() T) (T, error) {
	if p := l.v.Load(); p != nil {
		return *p, nil
	}
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	ch := make(chan T, 1)
	go func() { ch <- l.get(build) }()
	select {
	case v := <-ch:
		return v, nil
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// wanted reports whether the value is made or being made.
func (l *lazy[T]) wanted() bool { return l.v.Load() != nil || l.asked.Load() }

// set gives an unpublished generation its value.
func (l *lazy[T]) set(v T) { l.v.Store(&v) }

// norms are the document vectors' norms (a search computed each again
// before, a third of its cosine work).
func (x *gen) norms() []float64 {
	return x.prep.norms.get(func() []float64 {
		n := make([]float64, len(x.docs))
		for i := range x.docs {
			n[i] = x.vecNorm(i)
		}
		return n
	})
}

// lengthTerms are BM25's per-document length terms of each field, the same
// values every search computed with a division per posting.
func (x *gen) lengthTerms() [][]float64 {
	return x.prep.kn.get(func() [][]float64 {
		kn := make([][]float64, len(x.fields))
		for fi := range x.fields {
			kn[fi] = x.fieldLengthTerms(fi, nil, nil)
		}
		return kn
	})
}

// fieldLengthTerms are field fi's length terms: all computed when from is
// nil, else from's with the slots in changed (and any beyond from's end)
// computed again. Each is the same expression of the slot's length and the
// field's average, so a patched term equals a fresh one to the bit.
func (x *gen) fieldLengthTerms(fi int, from []float64, changed []int32) []float64 {
	k1, b := x.bm25Params()
	f := &x.fields[fi]
	avg := f.avg()
	term := func(slot int) float64 { return k1 * (1 - b + b*f.length[slot]/avg) }
	kn := make([]float64, len(f.length))
	done := copy(kn, from)
	for _, s := range changed {
		if int(s) < done {
			kn[s] = term(int(s))
		}
	}
	for slot := done; slot < len(kn); slot++ {
		kn[slot] = term(slot)
	}
	return kn
}

// blocks are the vectors laid out for dot32 (blocks.go), when the CPU has
// its kernel: another copy of the vectors in memory.
func (x *gen) blocks() *blocks {
	return x.prep.blocks.get(func() *blocks { return buildBlocks(x.docs) })
}

// inherit gives the generation just written (x) each part of prepared
// that its parent has made, patched in the slots the write changed. A part
// that a search of the parent is still making is waited for (searches do
// not wait for the writer, only the writer for it): a writer publishing
// generations faster than a full build would otherwise find its parent
// unmade at every write. Parts no search of the parent asked for are left
// to x's first search, and a write that renumbered the slots (compact)
// inherits nothing.
func (x *gen) inherit(parent *gen) {
	if x.renumbered {
		return
	}
	x.inheritBlocks(parent)
	changed := x.changed
	if parent.prep.norms.wanted() {
		n := parent.norms()
		norms := make([]float64, len(x.docs))
		done := copy(norms, n)
		for _, s := range changed {
			if int(s) < done {
				norms[s] = x.vecNorm(int(s))
			}
		}
		for slot := done; slot < len(norms); slot++ {
			norms[slot] = x.vecNorm(slot)
		}
		x.prep.norms.set(norms)
	}
	if parent.prep.kn.wanted() {
		pkn := parent.lengthTerms()
		kn := make([][]float64, len(x.fields))
		for fi := range x.fields {
			if parent.fields[fi].avg() == x.fields[fi].avg() {
				kn[fi] = x.fieldLengthTerms(fi, pkn[fi], changed)
			} else {
				// Every term depends on the average: all again.
				kn[fi] = x.fieldLengthTerms(fi, nil, nil)
			}
		}
		x.prep.kn.set(kn)
	}
	if parent.prep.ann.wanted() {
		if h := parent.ann(); h != nil && h.insert(x, parent, changed) {
			x.prep.ann.set(h)
		}
	}
	if parent.prep.blocks.wanted() {
		if pb := parent.blocks(); pb != nil {
			if b, ok := x.patchBlocks(pb, len(parent.docs)); ok {
				x.prep.blocks.set(b)
			}
		}
	}
}

// patchBlocks is parent's blocks with the groups of changed slots (and of
// slots beyond the parent's parentDocs) laid out again, the others shared.
// It declines (false) where a fresh build could come out differently than
// a patch: a new vector of another dimension, or no vector left at all.
func (x *gen) patchBlocks(parent *blocks, parentDocs int) (*blocks, bool) {
	lost := false // a changed slot has no vector now
	for _, s := range x.changed {
		switch l := len(x.docs[s].Vector); {
		case l == 0:
			lost = true
		case l != parent.dim:
			return nil, false
		}
	}
	if lost && !slices.ContainsFunc(x.docs, func(d retrieval.Document) bool { return len(d.Vector) > 0 }) {
		return nil, false
	}
	n := (len(x.docs) + blockDocs - 1) / blockDocs
	b := &blocks{dim: parent.dim, groups: make([][]float32, n)}
	copy(b.groups, parent.groups)
	rebuild := func(g int) {
		blk := make([]float32, blockDocs*b.dim)
		fillGroup(blk, x.docs, g)
		b.groups[g] = blk
	}
	// The parent's last group may have been partial: it and every group
	// after it are laid out again when the slots grew.
	fresh := parentDocs / blockDocs
	if len(x.docs) == parentDocs {
		fresh = n
	}
	for g := fresh; g < n; g++ {
		rebuild(g)
	}
	var last = -1
	for _, s := range slices.Sorted(slices.Values(x.changed)) {
		if g := int(s) / blockDocs; g != last && g < fresh {
			rebuild(g)
			last = g
		}
	}
	return b, true
}
