package memindex

import (
	"fmt"
	"math"
	"strings"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// field is the inverted index of one scored property.
type field struct {
	name     string
	postings map[string][]posting
	length   []float64 // tokens of each document in this field
	// distinct is the sum over documents of their distinct tokens in this
	// field: Weaviate's property-length tracker averages that.
	distinct, tokens float64
}

// buildFields indexes the documents' title and text as two fields (as
// Weaviate does) or, when classic, title + " " + text as one, and returns
// them with the average length BM25 normalises by.
func buildFields(docs []retrieval.Document, classic bool) ([]field, float64) {
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
		for i, d := range docs {
			tf := map[string]float64{}
			toks := Tokens(p.get(d))
			for _, t := range toks {
				tf[t]++
			}
			f.length[i] = float64(len(toks))
			f.tokens += float64(len(toks))
			f.distinct += float64(len(tf))
			for t, c := range tf {
				f.postings[t] = append(f.postings[t], posting{doc: int32(i), tf: c})
			}
		}
		fields[fi] = f
	}
	if len(docs) == 0 {
		return fields, 0
	}
	n := float64(len(docs))
	if classic {
		return fields, fields[0].tokens / n
	}
	// Weaviate 1.35 (inverted.BM25Searcher.generateQueryTermsAndStats)
	// normalises every property by one length: the mean over the searched
	// properties of each property's mean *distinct* token count (float32),
	// while a document's own length is its token count; 40 if that is 0.
	avg := 0.0
	for _, f := range fields {
		avg += float64(float32(f.distinct) / float32(n))
	}
	avg /= float64(len(fields))
	if avg == 0 || math.IsNaN(avg) {
		avg = 40
	}
	return fields, avg
}

// bm25 scores every matching document.
//
// Weaviate's variant (the default), as 1.35 computes it with BlockMax WAND:
//
//	score(d) = Σ_fields float32( Σ_terms idf(t)·c(t) · tf/(tf + k1·(1 - b + b·len_f(d)/avg)) )
//	idf(t)   = ln(1 + (N - n + 0.5)/(n + 0.5)),  n = ⌊(df_title + df_text) / #fields where df > 0⌋
//
// with c(t) the term's count in the query, stop words dropped, no (k1+1)
// factor (it does not change rankings), k1 and b as float32 (Weaviate stores
// them so) and the per-field sums added in float32.
//
// Classic: one field, idf with n = df, tf·(k1+1)/(tf + k1·norm), each query
// term once.
func (x *Index) bm25(text string, allow []bool) []scoredDoc {
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
		for fi, f := range x.fields {
			for _, p := range f.postings[t] {
				if allow != nil && !allow[p.doc] {
					continue
				}
				norm := 1 - b + b*f.length[p.doc]/x.avgLen
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
