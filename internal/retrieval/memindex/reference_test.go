package memindex

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// The reference search: memindex's search as it was before it was made
// cheaper (a map per field, an explanation string for every match, a sort
// of every scored document, norms computed in every search), kept as the
// straightforward statement of what a search returns. search_test.go
// checks the index against it, and BenchmarkSearch runs both.

type refScored struct {
	doc     int32
	score   float64
	explain string
}

func (x *gen) refSearch(q retrieval.Query) ([]retrieval.Hit, error) {
	if err := q.Validate(); err != nil {
		return nil, errs.Wrap(errs.Invalid, err, "search: %v", err)
	}
	allow := x.allowed(q.Filter)
	var scored []refScored
	switch q.Mode {
	case retrieval.BM25:
		scored = x.refBM25(q.Text, allow, min(q.Limit+WeaviateTieSlack, 10000))
	case retrieval.Vector:
		var err error
		if scored, err = x.refVector(q.Vector, allow); err != nil {
			return nil, err
		}
	case retrieval.Hybrid:
		var err error
		if scored, err = x.refHybrid(q, allow); err != nil {
			return nil, err
		}
	}
	top := refTopK(scored, q.Limit, x.docs)
	hits := make([]retrieval.Hit, len(top))
	for i, s := range top {
		d := x.docs[s.doc]
		if !q.WithVectors {
			d.Vector = nil
		}
		hits[i] = retrieval.Hit{Doc: d, Score: s.score, Explain: s.explain}
	}
	return hits, nil
}

func (x *gen) refVector(v []float32, allow []bool) ([]refScored, error) {
	qn := refNorm(v)
	if qn == 0 {
		return nil, errs.E(errs.Invalid, "search: query vector is all zeros")
	}
	out := make([]refScored, 0, len(x.docs))
	for i, d := range x.docs {
		if allow != nil && !allow[i] {
			continue
		}
		if len(d.Vector) == 0 {
			continue
		}
		if len(d.Vector) != len(v) {
			return nil, errs.E(errs.Invalid, "search: query vector has %d dimensions, documents have %d", len(v), len(d.Vector))
		}
		dn := refNorm(d.Vector)
		if dn == 0 {
			continue
		}
		c := float64(refDot(v, d.Vector)) / (qn * dn)
		out = append(out, refScored{doc: int32(i), score: c, explain: fmt.Sprintf("cosine %.4f", c)})
	}
	return out, nil
}

func (x *gen) refHybrid(q retrieval.Query, allow []bool) ([]refScored, error) {
	cand := max(q.Limit, x.params.HybridCandidates)
	var lex, vec []refScored
	if q.Alpha < 1 {
		lex = refTopK(x.refBM25(q.Text, allow, cand), cand, x.docs)
	}
	if q.Alpha > 0 {
		v, err := x.refVector(q.Vector, allow)
		if err != nil {
			return nil, err
		}
		vec = refTopK(v, cand, x.docs)
	}
	return refFuse(q.Fusion, q.Alpha, x.params.rankedFusionK(), lex, vec), nil
}

func refFuse(f retrieval.Fusion, alpha float64, k int, lex, vec []refScored) []refScored {
	acc := map[int32]float64{}
	exp := map[int32][]string{}
	add := func(list []refScored, w float64, name string) {
		if len(list) == 0 {
			return
		}
		lo, hi := list[0].score, list[0].score
		for _, s := range list {
			lo, hi = math.Min(lo, s.score), math.Max(hi, s.score)
		}
		for rank, s := range list {
			var v float64
			if f == retrieval.RankedFusion {
				v = w / float64(k+rank)
			} else {
				n := 1.0
				if hi > lo {
					n = (s.score - lo) / (hi - lo)
				}
				v = w * n
			}
			acc[s.doc] += v
			exp[s.doc] = append(exp[s.doc], fmt.Sprintf("%s %.4f (rank %d) -> %.4f", name, s.score, rank+1, v))
		}
	}
	add(lex, 1-alpha, "bm25")
	add(vec, alpha, "vector")
	name := "relativeScore"
	if f == retrieval.RankedFusion {
		name = "rankedFusion"
	}
	out := make([]refScored, 0, len(acc))
	for d, s := range acc {
		out = append(out, refScored{doc: d, score: s, explain: fmt.Sprintf("hybrid %s alpha=%.2f: %s", name, alpha, strings.Join(exp[d], "; "))})
	}
	return out
}

func refTopK(s []refScored, k int, docs []retrieval.Document) []refScored {
	sort.Slice(s, func(i, j int) bool {
		if s[i].score != s[j].score {
			return s[i].score > s[j].score
		}
		return docs[s[i].doc].ID < docs[s[j].doc].ID
	})
	if len(s) > k {
		s = s[:k]
	}
	return s
}

func refDot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func refNorm(v []float32) float64 { return math.Sqrt(float64(refDot(v, v))) }

func (x *gen) refBM25(text string, allow []bool, weaviateLimit int) []refScored {
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
			if l := len(f.postings.get(t)); l > 0 {
				df += uint64(l)
				nonZero++
			}
		}
		if nonZero == 0 {
			continue
		}
		nt := float64(df / nonZero)
		idf := math.Log(1 + (n-nt+0.5)/(nt+0.5))
		if !x.params.Classic {
			idf *= float64(counts[t])
		}
		for fi := range x.fields {
			f := &x.fields[fi]
			avg := f.avg()
			for _, p := range f.postings.get(t) {
				if allow != nil && !allow[p.doc] {
					continue
				}
				norm := 1 - b + b*f.length[p.doc]/avg
				tf := float64(p.tf)
				var s float64
				if x.params.Classic {
					s = idf * tf * (k1 + 1) / (tf + k1*norm)
				} else {
					s = tf / (tf + k1*norm) * idf
				}
				perField[fi][p.doc] += s
				parts[p.doc] = append(parts[p.doc], fmt.Sprintf("%s:%s=%.4f", f.name, t, s))
			}
		}
	}
	if x.params.WeaviateTopK && !x.params.Classic {
		k := max(int(1.1*float64(weaviateLimit)), weaviateLimit+10)
		for _, m := range perField {
			refCutField(m, k)
		}
	}
	total := map[int32]float32{}
	for _, m := range perField {
		for d, s := range m {
			total[d] += float32(s)
		}
	}
	out := make([]refScored, 0, len(total))
	for d, s := range total {
		score := float64(s)
		if x.params.Classic {
			score = perField[0][d]
		}
		out = append(out, refScored{doc: d, score: score, explain: "bm25 " + strings.Join(parts[d], " ")})
	}
	return out
}

func refCutField(m map[int32]float64, k int) {
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
