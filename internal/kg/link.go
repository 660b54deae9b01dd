package kg

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Candidate is an entity a normalised surface form can refer to.
type Candidate struct {
	QID     string
	IsLabel bool // the form is the entity's label, not only an alias
	Degree  int
	Derived bool // found through a derived form (the context linker only)
}

// better orders candidates for one form: label over alias, then higher
// degree, then QID. This is the deterministic tie-break of linking.
func better(a, b Candidate) bool {
	if a.IsLabel != b.IsLabel {
		return a.IsLabel
	}
	if a.Degree != b.Degree {
		return a.Degree > b.Degree
	}
	return a.QID < b.QID
}

// MaxMentionTokens bounds the length of a mention in tokens.
const MaxMentionTokens = 10

// Token is a word of a text: a maximal run of letters and digits.
type Token struct {
	Norm       string // lower-cased
	Start, End int    // byte offsets
}

// Tokenize splits text into tokens for linking.
func Tokenize(text string) []Token {
	var toks []Token
	start := -1
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
		if word && start < 0 {
			start = i
		}
		if !word && start >= 0 {
			toks = append(toks, Token{Norm: strings.ToLower(text[start:i]), Start: start, End: i})
			start = -1
		}
	}
	if start >= 0 {
		toks = append(toks, Token{Norm: strings.ToLower(text[start:]), Start: start, End: len(text)})
	}
	return toks
}

// NormalizeForm is the key labels, aliases and text spans are matched on:
// tokens lower-cased and joined by one space ("U.S.A." -> "u s a").
func NormalizeForm(s string) string {
	toks := Tokenize(s)
	parts := make([]string, len(toks))
	for i, t := range toks {
		parts[i] = t.Norm
	}
	return strings.Join(parts, " ")
}

// Linkable reports whether a normalised form may be linked at all: forms made
// only of stopwords or of one character ("can" for Canada, "us", "it") would
// link common words to entities.
func Linkable(form string) bool {
	if utf8.RuneCountInString(form) < 2 {
		return false
	}
	for _, w := range strings.Fields(form) {
		if !stopwords[w] {
			return true
		}
	}
	return false
}

// Spans lists the candidate forms of text: every run of 1..MaxMentionTokens
// tokens that is Linkable. Backends look these forms up in their dictionary.
func Spans(text string) (toks []Token, forms []string) {
	toks = Tokenize(text)
	seen := map[string]bool{}
	eachSpan(toks, func(_, _ int, f string) {
		if !seen[f] && Linkable(f) {
			seen[f] = true
			forms = append(forms, f)
		}
	})
	return toks, forms
}

// eachSpan calls f for every run of 1..MaxMentionTokens tokens starting at
// token i, n tokens long, with its normalised form, leftmost first and, from
// one start, shortest first: the one enumeration of mention candidates.
func eachSpan(toks []Token, f func(i, n int, form string)) {
	for i := range toks {
		var b strings.Builder
		for n := 0; n < MaxMentionTokens && i+n < len(toks); n++ {
			if n > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(toks[i+n].Norm)
			f(i, n, b.String())
		}
	}
}

// Resolve picks mentions from the candidates found for text's forms (as
// returned by Spans): longest match first, then leftmost, never overlapping;
// one entity per mention by the Candidate tie-break. Mentions come back in
// text order. Every Graph backend links through this function, so links are
// identical across backends.
func Resolve(text string, toks []Token, cands map[string][]Candidate) []Mention {
	type span struct {
		i, n int
		best Candidate
	}
	var spans []span
	eachSpan(toks, func(i, n int, f string) {
		cs := cands[f]
		if len(cs) == 0 || !Linkable(f) {
			return
		}
		best := cs[0]
		for _, c := range cs[1:] {
			if better(c, best) {
				best = c
			}
		}
		spans = append(spans, span{i: i, n: n + 1, best: best})
	})
	sort.Slice(spans, func(a, b int) bool {
		if spans[a].n != spans[b].n {
			return spans[a].n > spans[b].n
		}
		return spans[a].i < spans[b].i
	})
	used := make([]bool, len(toks))
	var out []Mention
	for _, s := range spans {
		free := true
		for k := s.i; k < s.i+s.n; k++ {
			if used[k] {
				free = false
				break
			}
		}
		if !free {
			continue
		}
		for k := s.i; k < s.i+s.n; k++ {
			used[k] = true
		}
		start, end := toks[s.i].Start, toks[s.i+s.n-1].End
		out = append(out, Mention{QID: s.best.QID, Surface: text[start:end], Start: start, End: end})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Start < out[b].Start })
	return out
}

// QIDs returns the distinct QIDs of mentions in order of first mention.
func QIDs(ms []Mention) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		if !seen[m.QID] {
			seen[m.QID] = true
			out = append(out, m.QID)
		}
	}
	return out
}

// Dictionary is an in-memory form -> candidates map built from entities.
type Dictionary map[string][]Candidate

// NewDictionary indexes the labels and aliases of entities.
func NewDictionary(es []Entity) Dictionary {
	d := Dictionary{}
	for _, e := range es {
		seen := map[string]bool{}
		add := func(s string, isLabel bool) {
			f := NormalizeForm(s)
			if f == "" || seen[f] || !Linkable(f) {
				return
			}
			seen[f] = true
			d[f] = append(d[f], Candidate{QID: e.QID, IsLabel: isLabel, Degree: e.Degree})
		}
		add(e.Label, true)
		for _, a := range e.Aliases {
			add(a, false)
		}
	}
	return d
}

// Link links text against the dictionary.
func (d Dictionary) Link(text string) []Mention {
	toks, forms := Spans(text)
	found := make(map[string][]Candidate, len(forms))
	for _, f := range forms {
		if cs, ok := d[f]; ok {
			found[f] = cs
		}
	}
	return Resolve(text, toks, found)
}

// stopwords are English function words (and question words) that never link
// on their own.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
before being below between both but by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself
no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that
the their theirs them themselves then there these they this those through to too under until up us very was we were
what when where which while who whom why will with would you your yours yourself yourselves also many much one two
name named called did does film films movie movies person people year years born die died`) {
		m[w] = true
	}
	return m
}()
