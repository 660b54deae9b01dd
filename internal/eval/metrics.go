package eval

import (
	"math"
	"strings"
	"unicode"
)

// Ks are the cut-offs reported for Recall, hit, all-supporting and answer recall.
var Ks = []int{1, 5, 10, 20}

// RecallAt is |gold ∩ top-k| / |gold| (0 when there is no gold).
func RecallAt(ranked, gold []string, k int) float64 {
	if len(gold) == 0 {
		return 0
	}
	return float64(foundIn(ranked, gold, k)) / float64(len(gold))
}

// HitAt is 1 when at least one gold document is in the top k.
func HitAt(ranked, gold []string, k int) float64 {
	if foundIn(ranked, gold, k) > 0 {
		return 1
	}
	return 0
}

// AllAt is 1 when every gold document is in the top k (multi-hop: all the
// supporting paragraphs were retrieved).
func AllAt(ranked, gold []string, k int) float64 {
	if len(gold) > 0 && foundIn(ranked, gold, k) == len(gold) {
		return 1
	}
	return 0
}

func foundIn(ranked, gold []string, k int) int {
	g := set(gold)
	n := 0
	for i, id := range ranked {
		if i >= k {
			break
		}
		if g[id] {
			n++
			delete(g, id) // a duplicate in the ranking counts once
		}
	}
	return n
}

func set(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// MRR is 1/rank of the first gold document in the ranking, 0 if none.
func MRR(ranked, gold []string) float64 {
	g := set(gold)
	for i, id := range ranked {
		if g[id] {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// NDCGAt is binary-relevance nDCG@k: sum over gold hits at rank i of
// 1/log2(i+1), divided by the same sum for an ideal ranking of
// min(|gold|, k) gold documents.
func NDCGAt(ranked, gold []string, k int) float64 {
	g := set(gold)
	dcg := 0.0
	for i, id := range ranked {
		if i >= k {
			break
		}
		if g[id] {
			dcg += 1 / math.Log2(float64(i+2))
			delete(g, id)
		}
	}
	idcg := 0.0
	for i := 0; i < min(len(set(gold)), k); i++ {
		idcg += 1 / math.Log2(float64(i+2))
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}

// Normalize is SQuAD's answer normalisation: lower-case, drop punctuation,
// drop the articles a/an/the, collapse whitespace.
func Normalize(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPunct(r) || unicode.IsSymbol(r) {
			continue
		}
		b.WriteRune(r)
	}
	words := strings.Fields(b.String())
	out := words[:0]
	for _, w := range words {
		if w == "a" || w == "an" || w == "the" {
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// AnswerRecallAt is 1 when a normalised gold answer occurs, on word
// boundaries, in the normalised text of one of the top-k documents.
// ok is false when the question has no usable answer string.
func AnswerRecallAt(texts, answers []string, k int) (v float64, ok bool) {
	var ans []string
	for _, a := range answers {
		if n := Normalize(a); n != "" {
			ans = append(ans, " "+n+" ")
		}
	}
	if len(ans) == 0 {
		return 0, false
	}
	for i, t := range texts {
		if i >= k {
			break
		}
		nt := " " + Normalize(t) + " "
		for _, a := range ans {
			if strings.Contains(nt, a) {
				return 1, true
			}
		}
	}
	return 0, true
}

// ExactMatch is SQuAD EM: 1 when the normalised prediction equals a
// normalised gold answer.
func ExactMatch(pred string, answers []string) float64 {
	p := Normalize(pred)
	for _, a := range answers {
		if Normalize(a) == p {
			return 1
		}
	}
	return 0
}

// F1 is SQuAD token F1 (multiset overlap of normalised tokens), the best
// over the gold answers.
func F1(pred string, answers []string) float64 {
	best := 0.0
	pt := strings.Fields(Normalize(pred))
	for _, a := range answers {
		at := strings.Fields(Normalize(a))
		if len(pt) == 0 || len(at) == 0 {
			if len(pt) == len(at) {
				best = math.Max(best, 1)
			}
			continue
		}
		count := map[string]int{}
		for _, t := range at {
			count[t]++
		}
		common := 0
		for _, t := range pt {
			if count[t] > 0 {
				count[t]--
				common++
			}
		}
		if common == 0 {
			continue
		}
		prec := float64(common) / float64(len(pt))
		rec := float64(common) / float64(len(at))
		best = math.Max(best, 2*prec*rec/(prec+rec))
	}
	return best
}
