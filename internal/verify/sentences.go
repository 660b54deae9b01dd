package verify

import (
	"github.com/dmar-kg/dmar/internal/evidence"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentences splits a document's text into sentences as FEVER's evidence in
// ../shared/data counts them (evidence.Split).
func Sentences(text string) []string { return evidence.Split(text) }

// Select picks the sentences shown for claim: for each document in order,
// its first sentence (which names its subject), then its other sentences by
// the claim's words they contain (most first, earlier first among equals),
// while the document's sentences fit in chars characters (the first one
// counts whatever its length). The picked sentences are numbered from 1 in
// document order; empty sentences are never shown.
func Select(claim string, docs []Source, chars int) []Sentence {
	words := contentWords(claim)
	var out []Sentence
	for _, d := range docs {
		sents := Sentences(d.Text)
		type cand struct{ idx, score int }
		var cands []cand
		for i, s := range sents {
			if strings.TrimSpace(s) == "" {
				continue
			}
			cands = append(cands, cand{i, overlap(words, s)})
		}
		if len(cands) == 0 {
			continue
		}
		// The first non-empty sentence always; the rest by overlap.
		rest := cands[1:]
		sort.SliceStable(rest, func(a, b int) bool { return rest[a].score > rest[b].score })
		picked := []int{cands[0].idx}
		used := utf8.RuneCountInString(strings.TrimSpace(sents[cands[0].idx]))
		for _, c := range rest {
			n := utf8.RuneCountInString(strings.TrimSpace(sents[c.idx]))
			if used+n > chars {
				continue
			}
			picked = append(picked, c.idx)
			used += n
		}
		sort.Ints(picked)
		for _, i := range picked {
			out = append(out, Sentence{Number: len(out) + 1, Doc: d.ID, Title: d.Title, Index: i, Text: strings.TrimSpace(sents[i])})
		}
	}
	return out
}

// stopwords are left out of the overlap between a claim and a sentence.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "is": true, "was": true, "are": true, "were": true, "be": true, "been": true,
	"of": true, "in": true, "on": true, "at": true, "to": true, "by": true, "for": true, "with": true, "from": true,
	"and": true, "or": true, "not": true, "no": true, "as": true, "it": true, "its": true, "he": true, "she": true,
	"his": true, "her": true, "they": true, "their": true, "this": true, "that": true, "which": true, "who": true,
	"has": true, "had": true, "have": true, "did": true, "does": true, "do": true, "only": true, "also": true,
}

func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func contentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, t := range tokens(s) {
		if !stopwords[t] {
			out[t] = true
		}
	}
	return out
}

// overlap counts the distinct claim words in sentence s.
func overlap(words map[string]bool, s string) int {
	seen := map[string]bool{}
	for _, t := range tokens(s) {
		if words[t] && !seen[t] {
			seen[t] = true
		}
	}
	return len(seen)
}
