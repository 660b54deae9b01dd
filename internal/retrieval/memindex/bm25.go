package memindex

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// field is the inverted index of one scored property.
type field struct {
	name     string
	get      func(retrieval.Document) string
	postings postingMap // each list sorted by slot
	length   []float64  // tokens of each slot's document in this field
	// tokens and counted give avg, the length BM25 normalises by: the mean
	// token count over the documents that have at least one token in the
	// field (Weaviate counts a document in a property's average only through
	// its postings), or over all documents when classic. Both are integers,
	// so after any writes avg is exactly what a fresh build computes.
	tokens, counted int64
	classic         bool
}

func (f *field) avg() float64 {
	if f.counted == 0 {
		return 0
	}
	return float64(f.tokens) / float64(f.counted)
}

// newFields are the empty fields of the documents' title and text (as
// Weaviate indexes them) or, when classic, of title + " " + text as one.
func newFields(classic bool) []field {
	if classic {
		return []field{{name: "title+text", get: func(d retrieval.Document) string { return d.Title + " " + d.Text }, classic: true}}
	}
	return []field{
		{name: "title", get: func(d retrieval.Document) string { return d.Title }},
		{name: "text", get: func(d retrieval.Document) string { return d.Text }},
	}
}

// docTerms is one document's tokens in one field: its length and each
// distinct term's count.
type docTerms struct {
	length int
	tf     map[string]float64
}

func (x *gen) tokenize(d retrieval.Document) []docTerms {
	out := make([]docTerms, len(x.fields))
	for fi := range x.fields {
		toks := Tokens(x.fields[fi].get(d))
		tf := make(map[string]float64, len(toks))
		for _, t := range toks {
			tf[t]++
		}
		out[fi] = docTerms{length: len(toks), tf: tf}
	}
	return out
}

// index adds slot's postings and length to every field of the generation
// being written.
func (x *gen) index(slot int32, terms []docTerms) {
	x.changed = append(x.changed, slot)
	for fi := range x.fields {
		f := &x.fields[fi]
		dt := terms[fi]
		for len(f.length) <= int(slot) {
			f.length = append(f.length, 0)
		}
		f.length[slot] = float64(dt.length)
		f.tokens += int64(dt.length)
		if dt.length > 0 || f.classic {
			f.counted++
		}
		for t, c := range dt.tf {
			x.addPosting(fi, t, slot, c)
		}
	}
}

// unindex removes the postings and length of the document in slot from
// every field of the generation being written.
func (x *gen) unindex(slot int32) {
	x.changed = append(x.changed, slot)
	terms := x.tokenize(x.docs[slot])
	for fi := range x.fields {
		f := &x.fields[fi]
		dt := terms[fi]
		f.length[slot] = 0
		f.tokens -= int64(dt.length)
		if dt.length > 0 || f.classic {
			f.counted--
		}
		for t := range dt.tf {
			x.removePosting(fi, t, slot)
		}
	}
}

// compact drops the empty slots that deletes left, renumbering the rest in
// the same order (so postings stay sorted and rankings do not move), with
// new posting lists, in the generation being written.
func (x *gen) compact() {
	renum := make([]int32, len(x.docs))
	docs := make([]retrieval.Document, 0, len(x.byID))
	for i, d := range x.docs {
		renum[i] = -1
		if d.ID != "" {
			renum[i] = int32(len(docs))
			x.byID[d.ID] = renum[i]
			docs = append(docs, d)
		}
	}
	for fi := range x.fields {
		f := &x.fields[fi]
		length := make([]float64, len(docs))
		for old, n := range renum {
			if n >= 0 && old < len(f.length) {
				length[n] = f.length[old]
			}
		}
		f.length = length
		all := f.postings.flat()
		for t, ps := range all {
			nps := make([]posting, len(ps))
			for i, p := range ps {
				nps[i] = posting{doc: renum[p.doc], tf: p.tf}
			}
			all[t] = nps
			x.owned[ownKey{fi, t}] = struct{}{}
		}
		f.postings = postingMap{base: all}
	}
	x.docs = docs
	if x.store != nil {
		vecs := make([]cvec, 0, len(docs))
		for old, n := range renum {
			if n >= 0 {
				vecs = append(vecs, x.vecs[old])
			}
		}
		x.vecs = vecs
	}
	x.dead = 0
	x.renumbered = true
}

// bm25 returns the keep best documents, best first, and what explains their
// scores (explainBM25).
//
// Weaviate's variant (the default), as 1.35 computes it with BlockMax WAND
// (lsmkv.Bucket.CreateDiskTerm, SegmentBlockMax.Score, BM25Searcher.wandBlock):
//
//	score(d) = Σ_fields float32( Σ_terms idf(t)·c(t) · tf/(tf + k1·(1 - b + b·len_f(d)/avg_f)) )
//	idf(t)   = ln(1 + (N - n + 0.5)/(n + 0.5)),  n = ⌊(df_title + df_text) / #fields where df > 0⌋
//
// with len_f(d) the document's token count in the field, avg_f the field's
// mean over documents with tokens in it, c(t) the term's count in the query,
// stop words dropped, no (k1+1) factor (it does not change rankings), k1 and
// b as float32 (Weaviate stores them so) and the per-field sums added in
// float32. One IDF for both fields, from their averaged document frequency,
// is Weaviate's choice (a BM25F-like blend); the fields' lengths stay apart.
//
// Classic: one field, idf with n = df, tf·(k1+1)/(tf + k1·norm), each query
// term once.
//
// weaviateLimit is the number of hits Weaviate would be asked for; it
// matters only with Params.WeaviateTopK.
//
// Scoring is term at a time over the postings into dense per-field arrays
// (pooled, and cleared through the lists of slots they touched), in the
// same order of additions as a map per field would see, so the sums are
// the same to the bit.
//
// With Params.MaxScore and the per-field cut (the default) or classic, it
// is MaxScore's (maxscore.go), which reads only the postings that can
// matter, with the same results to the bit; bm25Exhaustive scores them all.
func (x *gen) bm25(text string, allow []bool, weaviateLimit, keep int) ([]scoredDoc, lexical) {
	lx := x.lexicalOf(text)
	if x.params.MaxScore && (x.params.Classic || x.params.WeaviateTopK) {
		return x.bm25Pruned(lx, allow, weaviateLimit, keep), lx
	}
	return x.bm25Exhaustive(lx, allow, weaviateLimit, keep), lx
}

// lexicalOf is a query's distinct terms and their IDFs (times the term's
// count in the query, Weaviate's variant).
func (x *gen) lexicalOf(text string) lexical {
	terms, counts := queryTermCounts(text)
	lx := lexical{terms: terms, idf: make([]float64, len(terms))}
	n := float64(len(x.byID))
	for ti, t := range terms {
		var df, nonZero uint64
		for _, f := range x.fields {
			if l := len(f.postings.get(t)); l > 0 {
				df += uint64(l)
				nonZero++
			}
		}
		if nonZero == 0 {
			continue
		}
		nt := float64(df / nonZero) // integer division, as Weaviate
		idf := math.Log(1 + (n-nt+0.5)/(nt+0.5))
		if !x.params.Classic {
			idf *= float64(counts[t])
		}
		lx.idf[ti] = idf
	}
	return lx
}

// bm25Exhaustive scores every posting of the query's terms.
func (x *gen) bm25Exhaustive(lx lexical, allow []bool, weaviateLimit, keep int) []scoredDoc {
	k1, _ := x.bm25Params()
	kn := x.lengthTerms()
	sc := getScratch(len(x.fields), len(x.docs))
	defer putScratch(sc)
	for ti, t := range lx.terms {
		idf := lx.idf[ti]
		if idf == 0 {
			continue
		}
		for fi := range x.fields {
			score, seen, fkn := sc.score[fi], sc.seen[fi], kn[fi]
			for _, p := range x.fields[fi].postings.get(t) {
				if allow != nil && !allow[p.doc] {
					continue
				}
				if !seen[p.doc] {
					seen[p.doc] = true
					sc.hit[fi] = append(sc.hit[fi], p.doc)
				}
				score[p.doc] += termScore(x.params.Classic, idf, float64(p.tf), fkn[p.doc], k1)
			}
		}
	}
	// Per field, the documents that count (Weaviate's cut, when on), then
	// their float32 sum over the fields in field order.
	cut := -1
	if x.params.WeaviateTopK && !x.params.Classic {
		cut = max(int(1.1*float64(weaviateLimit)), weaviateLimit+10)
	}
	for fi := range x.fields {
		kept := sc.hit[fi]
		if cut >= 0 && len(kept) > cut {
			score := sc.score[fi]
			fb := newBest(cut, func(a, b int32) bool {
				if score[a] != score[b] {
					return score[a] > score[b]
				}
				return a < b // loaded earlier, as Weaviate's internal ids go
			}, sc.cut[:0])
			for _, d := range kept {
				fb.push(d)
			}
			kept = fb.h
			sc.cut = fb.h
		}
		for _, d := range kept {
			if !sc.inTotal[d] {
				sc.inTotal[d] = true
				sc.docs = append(sc.docs, d)
			}
			sc.total[d] += float32(sc.score[fi][d])
		}
	}
	top := newBest(keep, x.better, make([]scoredDoc, 0, min(keep, len(sc.docs))))
	for _, d := range sc.docs {
		s := float64(sc.total[d])
		if x.params.Classic {
			s = sc.score[0][d]
		}
		top.push(scoredDoc{doc: d, score: s})
	}
	return top.sorted()
}

// lexical is what explains a BM25 search's scores: its terms and their IDFs
// (0 for a term no field has, which matches no posting).
type lexical struct {
	terms []string
	idf   []float64
}

// termScore is one term's BM25 contribution in one field, kn being the
// document's k1·(1 - b + b·len/avg) in that field.
func termScore(classic bool, idf, tf, kn, k1 float64) float64 {
	if classic {
		return idf * tf * (k1 + 1) / (tf + kn)
	}
	return tf / (tf + kn) * idf
}

// bm25Params are k1 and b as scoring uses them: float32, as Weaviate stores
// them, unless classic.
func (x *gen) bm25Params() (k1, b float64) {
	if x.params.Classic {
		return x.params.K1, x.params.B
	}
	return float64(float32(x.params.K1)), float64(float32(x.params.B))
}

// explainBM25 is one document's BM25 explanation: "bm25" and, per term and
// field that matched it, "field:term=score" (scores as they were summed).
func (x *gen) explainBM25(doc int32, lx lexical) string {
	k1, _ := x.bm25Params()
	kn := x.lengthTerms()
	var b strings.Builder
	b.WriteString("bm25 ")
	first := true
	for ti, t := range lx.terms {
		for fi := range x.fields {
			f := &x.fields[fi]
			ps := f.postings.get(t)
			i, ok := slices.BinarySearchFunc(ps, doc, func(p posting, d int32) int { return int(p.doc) - int(d) })
			if !ok {
				continue
			}
			if !first {
				b.WriteByte(' ')
			}
			first = false
			fmt.Fprintf(&b, "%s:%s=%.4f", f.name, t, termScore(x.params.Classic, lx.idf[ti], float64(ps[i].tf), kn[fi][doc], k1))
		}
	}
	return b.String()
}

// scratch is one BM25 search's dense score arrays, kept in a pool between
// searches; every entry a search sets is reset before it goes back.
type scratch struct {
	score   [][]float64 // per field, by slot
	seen    [][]bool
	hit     [][]int32 // per field, the slots scored, in first-touch order
	total   []float32
	inTotal []bool
	docs    []int32 // slots with a total, in first-touch order
	cut     []int32
}

var scratchPool sync.Pool

func getScratch(fields, slots int) *scratch {
	sc, _ := scratchPool.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	for len(sc.score) < fields {
		sc.score, sc.seen, sc.hit = append(sc.score, nil), append(sc.seen, nil), append(sc.hit, nil)
	}
	for fi := 0; fi < fields; fi++ {
		if len(sc.score[fi]) < slots {
			sc.score[fi], sc.seen[fi] = make([]float64, slots), make([]bool, slots)
		}
	}
	if len(sc.total) < slots {
		sc.total, sc.inTotal = make([]float32, slots), make([]bool, slots)
	}
	return sc
}

func putScratch(sc *scratch) {
	for fi := range sc.hit {
		for _, d := range sc.hit[fi] {
			sc.score[fi][d], sc.seen[fi][d] = 0, false
		}
		sc.hit[fi] = sc.hit[fi][:0]
	}
	for _, d := range sc.docs {
		sc.total[d], sc.inTotal[d] = 0, false
	}
	sc.docs = sc.docs[:0]
	scratchPool.Put(sc)
}
