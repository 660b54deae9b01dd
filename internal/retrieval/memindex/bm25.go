package memindex

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// field is the inverted index of one scored property.
type field struct {
	name     string
	get      func(retrieval.Document) string
	postings map[string][]posting // each list sorted by slot
	length   []float64            // tokens of each slot's document in this field
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
	for fi := range x.fields {
		f := &x.fields[fi]
		dt := terms[fi]
		if f.postings == nil {
			f.postings = map[string][]posting{}
		}
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
		for t, ps := range f.postings {
			nps := make([]posting, len(ps))
			for i, p := range ps {
				nps[i] = posting{doc: renum[p.doc], tf: p.tf}
			}
			f.postings[t] = nps
			x.owned[ownKey{fi, t}] = struct{}{}
		}
	}
	x.docs = docs
	x.dead = 0
}

// bm25 scores every matching document.
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
func (x *gen) bm25(text string, allow []bool, weaviateLimit int) []scoredDoc {
	terms, counts := queryTermCounts(text)
	n := float64(len(x.byID))
	k1, b := float64(float32(x.params.K1)), float64(float32(x.params.B))
	if x.params.Classic {
		k1, b = x.params.K1, x.params.B
	}
	perField := make([]map[int32]float64, len(x.fields))
	for i := range perField {
		perField[i] = map[int32]float64{}
	}
	parts := map[int32][]string{}
	for _, t := range terms {
		var df, nonZero uint64
		for _, f := range x.fields {
			if l := len(f.postings[t]); l > 0 {
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
		for fi := range x.fields {
			f := &x.fields[fi]
			avg := f.avg()
			for _, p := range f.postings[t] {
				if allow != nil && !allow[p.doc] {
					continue
				}
				norm := 1 - b + b*f.length[p.doc]/avg
				var s float64
				if x.params.Classic {
					s = idf * p.tf * (k1 + 1) / (p.tf + k1*norm)
				} else {
					s = p.tf / (p.tf + k1*norm) * idf
				}
				perField[fi][p.doc] += s
				parts[p.doc] = append(parts[p.doc], fmt.Sprintf("%s:%s=%.4f", f.name, t, s))
			}
		}
	}
	if x.params.WeaviateTopK && !x.params.Classic {
		k := max(int(1.1*float64(weaviateLimit)), weaviateLimit+10)
		for _, m := range perField {
			cutField(m, k)
		}
	}
	total := map[int32]float32{}
	for _, m := range perField {
		for d, s := range m {
			total[d] += float32(s)
		}
	}
	out := make([]scoredDoc, 0, len(total))
	for d, s := range total {
		score := float64(s)
		if x.params.Classic {
			score = perField[0][d]
		}
		out = append(out, scoredDoc{doc: d, score: score, explain: "bm25 " + strings.Join(parts[d], " ")})
	}
	return out
}

// cutField keeps the k best documents of one field's scores (ties: lower
// document index, i.e. loaded earlier, as Weaviate's internal ids go).
func cutField(m map[int32]float64, k int) {
	if len(m) <= k {
		return
	}
	type ds struct {
		doc   int32
		score float64
	}
	all := make([]ds, 0, len(m))
	for d, s := range m {
		all = append(all, ds{d, s})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].score != all[j].score {
			return all[i].score > all[j].score
		}
		return all[i].doc < all[j].doc
	})
	for _, x := range all[k:] {
		delete(m, x.doc)
	}
}
