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
	postings map[string][]posting
	length   []float64 // tokens of each document in this field
	// avg is the length BM25 normalises by: the mean token count over the
	// documents that have at least one token in the field (Weaviate counts
	// a document in a property's average only through its postings), or
	// over all documents when classic.
	avg float64
}

// buildFields indexes the documents' title and text as two fields (as
// Weaviate does) or, when classic, title + " " + text as one.
func buildFields(docs []retrieval.Document, classic bool) []field {
	type prop struct {
		name string
		get  func(retrieval.Document) string
	}
	props := []prop{
		{"title", func(d retrieval.Document) string { return d.Title }},
		{"text", func(d retrieval.Document) string { return d.Text }},
	}
	if classic {
		props = []prop{{"title+text", func(d retrieval.Document) string { return d.Title + " " + d.Text }}}
	}
	fields := make([]field, len(props))
	for fi, p := range props {
		f := field{name: p.name, postings: map[string][]posting{}, length: make([]float64, len(docs))}
		var tokens, counted float64
		for i, d := range docs {
			tf := map[string]float64{}
			toks := Tokens(p.get(d))
			for _, t := range toks {
				tf[t]++
			}
			f.length[i] = float64(len(toks))
			tokens += float64(len(toks))
			if len(toks) > 0 || classic {
				counted++
			}
			for t, c := range tf {
				f.postings[t] = append(f.postings[t], posting{doc: int32(i), tf: c})
			}
		}
		if counted > 0 {
			f.avg = tokens / counted
		}
		fields[fi] = f
	}
	return fields
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
func (x *Index) bm25(text string, allow []bool, weaviateLimit int) []scoredDoc {
	terms, counts := queryTermCounts(text)
	n := float64(len(x.docs))
	k1, b := float64(float32(x.params.K1)), float64(float32(x.params.B))
	if x.params.Classic {
		k1, b = x.params.K1, x.params.B
	}
	perField := make([]map[int32]float64, len(x.fields))
	for i := range perField {
		perField[i] = map[int32]float64{}
	}
	// The explanation's parts are formatted only for the documents a
	// search returns (scoredDoc.why): formatting them for every match was
	// a tenth of a loaded server's CPU.
	parts := map[int32][]bm25Part{}
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
		for fi, f := range x.fields {
			for _, p := range f.postings[t] {
				if allow != nil && !allow[p.doc] {
					continue
				}
				norm := 1 - b + b*f.length[p.doc]/f.avg
				var s float64
				if x.params.Classic {
					s = idf * p.tf * (k1 + 1) / (p.tf + k1*norm)
				} else {
					s = p.tf / (p.tf + k1*norm) * idf
				}
				perField[fi][p.doc] += s
				parts[p.doc] = append(parts[p.doc], bm25Part{f.name, t, s})
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
		out = append(out, scoredDoc{doc: d, score: score, parts: parts[d]})
	}
	return out
}

// bm25Part is one field's and term's share of a document's BM25 score.
type bm25Part struct {
	field, term string
	score       float64
}

func bm25Explain(parts []bm25Part) string {
	var b strings.Builder
	b.WriteString("bm25")
	for _, p := range parts {
		fmt.Fprintf(&b, " %s:%s=%.4f", p.field, p.term, p.score)
	}
	return b.String()
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
