package memindex

import (
	"strings"
	"unicode"
)

// Tokens splits text exactly as Weaviate's "word" tokenisation does: runs of
// letters and numbers (unicode.IsLetter, unicode.IsNumber, so "²" and "Ⅻ"
// are kept like digits; unicode.IsDigit would split them off), each
// lower-cased with strings.ToLower after splitting, in Weaviate's order.
func Tokens(text string) []string {
	ts := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	for i, t := range ts {
		ts[i] = strings.ToLower(t)
	}
	return ts
}

// queryTermCounts returns the distinct non-stopword tokens of a query, in
// order, and how often each occurs: Weaviate multiplies a term's IDF by that
// count ("nolan nolan" weighs nolan twice).
func queryTermCounts(text string) ([]string, map[string]int) {
	counts := map[string]int{}
	var out []string
	for _, t := range Tokens(text) {
		if stopwords[t] {
			continue
		}
		if counts[t] == 0 {
			out = append(out, t)
		}
		counts[t]++
	}
	return out, counts
}

// stopwords is Weaviate's "en" preset (1.35), which removes these words from
// BM25 queries (documents keep them, and they count in document lengths).
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be but by for if in into is it no not of on or such that the
their then there these they this to was will with`) {
		m[w] = true
	}
	return m
}()
