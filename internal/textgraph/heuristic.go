package textgraph

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Heuristic is the Go extractor, the baseline the others must beat: runs of
// capitalised words (joined across "of", "the", "de", "von"...), dates
// ("January 1960", "12 May 2003", a year alone) and quoted titles, per
// sentence. It finds names, not common noun phrases, and needs nothing
// installed.
type Heuristic struct{}

// Name implements Extractor.
func (Heuristic) Name() string { return "heuristic" }

// Extract implements Extractor.
func (Heuristic) Extract(ctx context.Context, ps []Passage) ([]Extraction, error) {
	out := make([]Extraction, len(ps))
	for i, p := range ps {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = HeuristicPhrases(PassageText(p))
	}
	return out, nil
}

// HeuristicPhrases are the phrases Heuristic finds in text, each key once
// (its first occurrence), in text order.
func HeuristicPhrases(text string) Extraction {
	var ex Extraction
	seen := map[string]bool{}
	add := func(s string, sent int) {
		s = strings.TrimSpace(s)
		if k := Key(s); k != "" && !seen[k] {
			seen[k] = true
			ex.Phrases = append(ex.Phrases, Phrase{Text: s, Kind: Named, Sentence: sent})
		}
	}
	for si, r := range sentences(text) {
		s := text[r[0]:r[1]]
		for _, q := range quoted(s) {
			add(q, si)
		}
		words := splitWords(s)
		for i := 0; i < len(words); {
			if n := dateAt(words, i); n > 0 {
				add(s[words[i].start:words[i+n-1].end], si)
				i += n
				continue
			}
			if n := nameAt(words, i); n > 0 {
				add(s[words[i].start:words[i+n-1].end], si)
				i += n
				continue
			}
			i++
		}
	}
	return ex
}

// word is a word of a sentence, with whether punctuation ends it (a name
// does not run on across a comma).
type word struct {
	text       string
	start, end int  // byte offsets in the sentence
	first      bool // the sentence's first word
	stop       bool // punctuation follows it
}

// splitWords cuts s into words: runs of letters, digits and marks, with
// inner '-', '.', '&' and apostrophes kept ("Jay-Z", "U.S.", "AT&T",
// "O'Brien").
func splitWords(s string) []word {
	var out []word
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !wordRune(r) {
			if len(out) > 0 && r != ' ' && !(r == '.' && initial(out[len(out)-1].text)) {
				out[len(out)-1].stop = true
			}
			i += n
			continue
		}
		j := i
		for j < len(s) {
			r, n := utf8.DecodeRuneInString(s[j:])
			if wordRune(r) {
				j += n
				continue
			}
			if (r == '-' || r == '.' || r == '&' || r == '\'' || r == '’') && j+n < len(s) {
				if r2, _ := utf8.DecodeRuneInString(s[j+n:]); wordRune(r2) {
					j += n
					continue
				}
			}
			break
		}
		if j < len(s) && s[j] == '.' && isUpper(s[j-1]) && strings.Contains(s[i:j], ".") {
			j++ // "U.S." keeps its last period
		}
		out = append(out, word{text: s[i:j], start: i, end: j, first: len(out) == 0})
		i = j
	}
	return out
}

// initial reports whether w is a single capital letter ("J" of "J. R. R.
// Tolkien"), after which a period ends no name.
func initial(w string) bool { return len(w) == 1 && isUpper(w[0]) }

func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// connectors may sit inside a name ("University of Copenhagen", "Lord of
// the Rings", "Ludwig van Beethoven") when a capitalised word follows.
var connectors = map[string]bool{"of": true, "the": true, "de": true, "da": true, "du": true, "la": true, "le": true,
	"von": true, "van": true, "der": true, "den": true, "del": true, "di": true, "y": true, "for": true}

// openers are capitalised only because they open a sentence or a clause;
// they never start a name.
var openers = map[string]bool{"The": true, "A": true, "An": true, "In": true, "On": true, "At": true, "It": true, "He": true,
	"She": true, "They": true, "His": true, "Her": true, "Its": true, "Their": true, "This": true, "That": true, "These": true,
	"Those": true, "There": true, "After": true, "Before": true, "During": true, "Since": true, "As": true, "By": true,
	"From": true, "With": true, "For": true, "Of": true, "To": true, "When": true, "While": true, "Although": true,
	"However": true, "But": true, "And": true, "Or": true, "If": true, "Following": true, "According": true, "Despite": true,
	"Also": true, "Other": true, "Some": true, "Many": true, "Most": true, "One": true, "Two": true, "Both": true, "Each": true,
	"Upon": true, "Under": true, "Over": true, "Between": true, "Born": true, "I": true, "We": true, "You": true, "What": true,
	"Who": true, "Which": true, "Where": true, "Why": true, "How": true, "Is": true, "Was": true, "Are": true, "Were": true,
	"Did": true, "Do": true, "Does": true, "Has": true, "Have": true, "Had": true, "Not": true, "No": true}

// capitalised reports whether w starts with an upper-case letter or is a
// number inside a name ("Apollo 11", "Windows 95" are taken by nameAt).
func capitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// nameAt is the length in words of the name starting at words[i], 0 when
// none starts there: capitalised words, connectors between them, and a
// number right after them ("Apollo 11"). A sentence's opener alone is no
// name, nor is a run that ends at a connector.
func nameAt(words []word, i int) int {
	w := words[i]
	if !capitalised(w.text) || openers[w.text] {
		return 0
	}
	end := i + 1 // the name is words[i:end] so far
	for j := i + 1; j < len(words) && !words[j-1].stop; j++ {
		t := words[j].text
		switch {
		case capitalised(t) && (!openers[t] || connectors[words[j-1].text]):
			end = j + 1
		case isNumber(t) && j == end:
			end = j + 1
		case connectors[t]:
			// kept only if a capitalised word follows
		default:
			j = len(words) // the name ends
		}
	}
	if end-i == 1 && w.first && isCommon(w.text) {
		return 0
	}
	return end - i
}

// isCommon is a guess that a sentence's first word is capitalised only for
// being first: a short word that is all lower-case but its first letter and
// that a title would not use alone.
func isCommon(w string) bool {
	return len(w) <= 3 || strings.HasSuffix(w, "ly") || strings.HasSuffix(w, "ing")
}

var months = map[string]bool{"January": true, "February": true, "March": true, "April": true, "May": true, "June": true,
	"July": true, "August": true, "September": true, "October": true, "November": true, "December": true}

// dateAt is the length in words of the date starting at words[i]: "May
// 2003", "12 May 2003", "May 12, 2003" (the comma is kept out), or a year
// alone; 0 when none starts there.
func dateAt(words []word, i int) int {
	w := words[i].text
	at := func(j int) string {
		if j < len(words) {
			return words[j].text
		}
		return ""
	}
	switch {
	case months[w] && isYear(at(i+1)):
		return 2
	case months[w] && isDay(at(i+1)) && isYear(at(i+2)):
		return 3
	case isDay(w) && months[at(i+1)] && isYear(at(i+2)):
		return 3
	case isDay(w) && months[at(i+1)]:
		return 2
	case isYear(w):
		return 1
	}
	return 0
}

func isNumber(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func isYear(w string) bool { return len(w) == 4 && isNumber(w) && (w[0] == '1' || w[0] == '2') }

func isDay(w string) bool { return isNumber(w) && len(w) <= 2 && w != "0" }

// quoted are the short spans between double quotes in s (titles of works:
// "Hey Jude", “Thriller”, “Thriller”), at most eight words each.
func quoted(s string) []string {
	var out []string
	for _, q := range [][2]string{{"\"", "\""}, {"“", "”"}, {"``", "''"}} {
		rest := s
		for {
			a := strings.Index(rest, q[0])
			if a < 0 {
				break
			}
			rest = rest[a+len(q[0]):]
			b := strings.Index(rest, q[1])
			if b < 0 {
				break
			}
			if in := strings.TrimSpace(rest[:b]); in != "" && len(strings.Fields(in)) <= 8 {
				out = append(out, in)
			}
			rest = rest[b+len(q[1]):]
		}
	}
	return out
}

// HeuristicVersion names the rules of HeuristicPhrases; a text graph built
// under others is built again.
const HeuristicVersion = "1"
