package kg

import (
	"context"
	"math"
	"sort"
	"strings"
	"unicode"
)

// This file is the opt-in context linker (pipeline option linking=context):
// the exact forms of Link plus weaker forms derived from labels and aliases,
// a confidence per mention, and a filter. Link itself is unchanged.

// CandidateLinker is implemented by backends that can list every candidate of
// every span of a text, derived forms included, for the context linker
// (memkg does; a backend without it links exactly).
type CandidateLinker interface {
	LinkCandidates(ctx context.Context, text string) (toks []Token, spans []SpanCandidates, err error)
}

// SpanCandidates are the entities a run of tokens can refer to.
type SpanCandidates struct {
	I, N  int    // the first token and the number of tokens
	Form  string // the normalised form
	Cands []Candidate
	// NameFreq is, for a one-token span, the number of entity names (labels
	// and aliases) that hold the token: a word that many names share
	// ("music", "film", "band") is generic. 0 for longer spans.
	NameFreq int
}

// Candidate.Derived marks a candidate found through a derived form; see
// DerivedForms.

// DerivedForms are weaker normalised forms of a label or alias: without a
// leading article ("A slasher film" -> "slasher film"), with film and movie
// swapped ("slasher movie"), and for a personal name of three or four
// capitalised words, the name without its first or its middle words
// ("Julius Robert Oppenheimer" -> "robert oppenheimer", "julius
// oppenheimer"). Forms that are not Linkable, or a single token, are left
// out.
func DerivedForms(name string) []string {
	toks := Tokenize(name)
	if len(toks) < 2 {
		return nil
	}
	words := make([]string, len(toks))
	for i, t := range toks {
		words[i] = t.Norm
	}
	var out []string
	seen := map[string]bool{strings.Join(words, " "): true}
	add := func(ws []string) {
		if len(ws) < 2 {
			return
		}
		f := strings.Join(ws, " ")
		if !seen[f] && Linkable(f) {
			seen[f] = true
			out = append(out, f)
		}
	}
	base := [][]string{words}
	if articles[words[0]] && len(words) >= 3 {
		base = append(base, words[1:])
		add(words[1:])
	}
	for _, ws := range base {
		for i, w := range ws {
			if s, ok := filmSynonyms[w]; ok {
				v := append(append(append([]string(nil), ws[:i]...), s), ws[i+1:]...)
				add(v)
			}
		}
	}
	if n := len(words); (n == 3 || n == 4) && personLike(name, toks) {
		add([]string{words[0], words[n-1]})
		add(words[n-2:])
		if n == 4 {
			add(words[1:])
		}
	}
	return out
}

var articles = map[string]bool{"a": true, "an": true, "the": true}

var filmSynonyms = map[string]string{"film": "movie", "movie": "film", "films": "movies", "movies": "films"}

// personLike reports whether name looks like a personal name: every token a
// capitalised word of letters, the last one at least three letters long.
func personLike(name string, toks []Token) bool {
	for _, t := range toks {
		w := name[t.Start:t.End]
		for i, r := range w {
			if !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) {
				return false
			}
			if i == 0 && !unicode.IsUpper(r) {
				return false
			}
		}
	}
	last := toks[len(toks)-1]
	return len([]rune(name[last.Start:last.End])) >= 3
}

// ContextDictionary is the context linker's dictionary: the exact forms of
// NewDictionary, the derived forms, and how many names share each token.
type ContextDictionary struct {
	Exact    Dictionary
	Derived  Dictionary // forms no entity has as a label or alias
	nameFreq map[string]int
}

// NewContextDictionary indexes es; exact is their NewDictionary.
func NewContextDictionary(es []Entity, exact Dictionary) *ContextDictionary {
	d := &ContextDictionary{Exact: exact, Derived: Dictionary{}, nameFreq: map[string]int{}}
	for _, e := range es {
		names := append([]string{e.Label}, e.Aliases...)
		seenTok, seenForm := map[string]bool{}, map[string]bool{}
		for _, n := range names {
			for _, t := range Tokenize(n) {
				if !seenTok[t.Norm] {
					seenTok[t.Norm] = true
					d.nameFreq[t.Norm]++
				}
			}
		}
		for _, n := range names {
			for _, f := range DerivedForms(n) {
				if seenForm[f] {
					continue
				}
				seenForm[f] = true
				if _, ok := exact[f]; ok {
					continue // an exact form wins; a derived one would only add noise
				}
				d.Derived[f] = append(d.Derived[f], Candidate{QID: e.QID, Degree: e.Degree, Derived: true})
			}
		}
	}
	return d
}

// Candidates lists the spans of text that have candidates.
func (d *ContextDictionary) Candidates(text string) ([]Token, []SpanCandidates) {
	toks := Tokenize(text)
	var out []SpanCandidates
	for i := range toks {
		var b strings.Builder
		for n := 0; n < MaxMentionTokens && i+n < len(toks); n++ {
			if n > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(toks[i+n].Norm)
			f := b.String()
			if !Linkable(f) {
				continue
			}
			cs := d.Exact[f]
			if len(cs) == 0 {
				cs = d.Derived[f]
			}
			if len(cs) == 0 {
				continue
			}
			sc := SpanCandidates{I: i, N: n + 1, Form: f, Cands: cs}
			if n == 0 {
				sc.NameFreq = d.nameFreq[f]
			}
			out = append(out, sc)
		}
	}
	return toks, out
}

// ConfidenceParams weigh the features of a mention's confidence, a logistic
// function of
//
//	Bias + Alias (alias form) + Derived (derived form) + Tokens*(tokens-1, at most 3)
//	- Shared*ln(entities sharing the form) - Generic*ln(1+NameFreq) (one token)
//	+ Degree*ln(1+degree) + Context*cosine(question, entity document)
//
// Mentions below Threshold are dropped, the most confident one kept.
type ConfidenceParams struct {
	Bias, Alias, Derived, Tokens, Shared, Generic, Degree, Context float64
	Threshold                                                      float64
}

// DefaultConfidenceParams were tuned on kgqa train (docs in linkfilter.go).
func DefaultConfidenceParams() ConfidenceParams {
	return ConfidenceParams{
		Bias: 2, Alias: -0.5, Derived: -1, Tokens: 1, Shared: 0.5, Generic: 0.5, Degree: 0.2, Context: 4,
		Threshold: 0.5,
	}
}

func (p ConfidenceParams) logit(s SpanCandidates, c Candidate, ctxScore map[string]float64) float64 {
	z := p.Bias + p.Tokens*float64(min(s.N-1, 3))
	switch {
	case c.Derived:
		z += p.Derived
	case !c.IsLabel:
		z += p.Alias
	}
	z -= p.Shared * math.Log(float64(len(s.Cands)))
	if s.N == 1 {
		z -= p.Generic * math.Log1p(float64(s.NameFreq))
	}
	z += p.Degree * math.Log1p(float64(c.Degree))
	if v, ok := ctxScore[c.QID]; ok {
		z += p.Context * v
	}
	return z
}

// CandidateQIDs are the distinct QIDs of spans, sorted.
func CandidateQIDs(spans []SpanCandidates) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range spans {
		for _, c := range s.Cands {
			if !seen[c.QID] {
				seen[c.QID] = true
				out = append(out, c.QID)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ResolveConfident picks mentions as Resolve does (longest first, then
// leftmost, no overlaps) but chooses each span's entity by confidence
// (ctxScore: a context score per QID in [-1, 1], e.g. the cosine between
// the question and the entity's document; absent QIDs score nothing), then
// drops the mentions below p.Threshold, always keeping the most confident.
// Mentions come in text order with their Confidence set.
func ResolveConfident(text string, toks []Token, spans []SpanCandidates, ctxScore map[string]float64, p ConfidenceParams) []Mention {
	type pick struct {
		s    SpanCandidates
		best Candidate
		z    float64
	}
	picks := make([]pick, 0, len(spans))
	for _, s := range spans {
		if len(s.Cands) == 0 {
			continue
		}
		pk := pick{s: s, best: s.Cands[0], z: p.logit(s, s.Cands[0], ctxScore)}
		for _, c := range s.Cands[1:] {
			z := p.logit(s, c, ctxScore)
			if z > pk.z || (z == pk.z && better(c, pk.best)) {
				pk.best, pk.z = c, z
			}
		}
		picks = append(picks, pk)
	}
	sort.SliceStable(picks, func(a, b int) bool {
		if picks[a].s.N != picks[b].s.N {
			return picks[a].s.N > picks[b].s.N
		}
		return picks[a].s.I < picks[b].s.I
	})
	used := make([]bool, len(toks))
	var out []Mention
	for _, pk := range picks {
		free := true
		for k := pk.s.I; k < pk.s.I+pk.s.N; k++ {
			free = free && !used[k]
		}
		if !free {
			continue
		}
		for k := pk.s.I; k < pk.s.I+pk.s.N; k++ {
			used[k] = true
		}
		start, end := toks[pk.s.I].Start, toks[pk.s.I+pk.s.N-1].End
		out = append(out, Mention{QID: pk.best.QID, Surface: text[start:end], Start: start, End: end, Confidence: 1 / (1 + math.Exp(-pk.z))})
	}
	if len(out) == 0 {
		return out
	}
	top := 0
	for i, m := range out {
		if m.Confidence > out[top].Confidence {
			top = i
		}
	}
	kept := out[:0:0]
	for i, m := range out {
		if i == top || m.Confidence >= p.Threshold {
			kept = append(kept, m)
		}
	}
	sort.Slice(kept, func(a, b int) bool { return kept[a].Start < kept[b].Start })
	return kept
}
