package memindex

import (
	"strings"
	"unicode"
)

// Tokens splits text as Weaviate's "word" tokenisation does: runs of letters
// and digits, lower-cased.
func Tokens(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// QueryTerms are the distinct non-stopword tokens of a query, in order.
func QueryTerms(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range Tokens(text) {
		if stopwords[t] || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

// stopwords: an English list in the spirit of Weaviate's "en" preset, which
// removes such words from BM25 queries.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be but by for if in into is it no not of on or such that the
their then there these they this to was will with`) {
		m[w] = true
	}
	return m
}()
