package kg

import (
	"context"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/samber/lo"
	"golang.org/x/text/unicode/norm"
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
	// Content counts the span's tokens that are not stopwords ("an artist":
	// 1). NameFreq is, for a span of one content token, the number of entity
	// names (labels and aliases) that hold the token: a word that many names
	// share ("music", "artist", "band") is generic. 0 for longer spans.
	Content, NameFreq int
}

// DerivedForms are weaker normalised forms of a label or alias: without a
// leading article ("A slasher film" -> "slasher film"), with film and movie
// swapped ("slasher movie"), without diacritics ("Gérard Depardieu" ->
// "gerard depardieu"), and for a personal name of three to six words
// (capitalised, or particles such as "de"; a trailing "Jr.", "Sr." or "III"
// dropped), the first name with each later name and the last two names
// ("Katharine Hope McPhee Foster" -> "katharine mcphee", "Julius Robert
// Oppenheimer" -> "robert oppenheimer"). Forms that are not Linkable, or a
// single token, are left out.
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
		for _, f := range []string{strings.Join(ws, " "), Fold(strings.Join(ws, " "))} {
			if !seen[f] && Linkable(f) {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	add(words) // its folded form
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
	if ws, ok := personName(name, toks); ok && len(ws) >= 3 {
		for j := 1; j < len(ws); j++ {
			if !particles[ws[j]] {
				add([]string{ws[0], ws[j]})
			}
		}
		add(ws[len(ws)-2:]) // "de alencar" too: it helped on train
	} else if ok && len(ws) == 2 && len(ws) < len(words) {
		add(ws) // "Harold Lloyd Sr." -> "harold lloyd"
	}
	return out
}

var articles = map[string]bool{"a": true, "an": true, "the": true}

var filmSynonyms = map[string]string{"film": "movie", "movie": "film", "films": "movies", "movies": "films"}

var particles = map[string]bool{"de": true, "da": true, "di": true, "du": true, "van": true, "von": true, "der": true, "den": true, "le": true, "la": true, "née": true, "y": true, "bin": true, "al": true}

var titles = map[string]bool{"sir": true, "lord": true, "lady": true, "count": true, "countess": true, "saint": true, "st": true, "dr": true, "king": true, "queen": true, "prince": true, "princess": true, "pope": true, "dame": true}

var nameSuffixes = map[string]bool{"jr": true, "sr": true, "ii": true, "iii": true, "iv": true}

// personName reports whether name looks like a personal name of two to six
// words: every token a capitalised word of letters or a particle, the last
// name at least three letters long. It returns the normalised words without
// a leading title (Sir, Count) and a trailing suffix (Jr., Sr., III); a
// name that starts with an article is none.
func personName(name string, toks []Token) ([]string, bool) {
	if len(toks) > 7 {
		return nil, false
	}
	if articles[toks[0].Norm] {
		return nil, false // "The Las Vegas Story" is no name
	}
	if titles[toks[0].Norm] && len(toks) > 2 {
		toks = toks[1:] // "Sir Francis Bacon", "Count Adam Zamoyski"
	}
	var ws []string
	for k, t := range toks {
		w := name[t.Start:t.End]
		if k > 0 && k == len(toks)-1 && nameSuffixes[t.Norm] {
			break
		}
		if particles[t.Norm] && k > 0 {
			ws = append(ws, t.Norm)
			continue
		}
		for i, r := range w {
			if !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) {
				return nil, false
			}
			if i == 0 && !unicode.IsUpper(r) {
				return nil, false
			}
		}
		ws = append(ws, t.Norm)
	}
	if len(ws) < 2 || len(ws) > 6 || particles[ws[len(ws)-1]] || len([]rune(ws[len(ws)-1])) < 3 {
		return nil, false
	}
	return ws, true
}

// Fold removes diacritics from a normalised form ("gérard" -> "gerard",
// "takurō" -> "takuro"); other letters are kept.
func Fold(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
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
		for _, t := range NameTokens(e) {
			d.nameFreq[t]++
		}
		for _, f := range EntityDerivedForms(e) {
			if _, ok := exact[f]; ok {
				continue // an exact form wins; a derived one would only add noise
			}
			d.Derived[f] = append(d.Derived[f], Candidate{QID: e.QID, Degree: e.Degree, Derived: true})
		}
	}
	return d
}

// ContextDictionaryOf assembles a context dictionary from its parts, as a
// backend that stores them finds them for one text: the exact and derived
// candidates of the text's forms and how many names hold each of its tokens
// (NameTokens counts them). Derived must hold no form that Exact has, as
// NewContextDictionary ensures; Candidates then answers as the whole one.
func ContextDictionaryOf(exact, derived Dictionary, nameFreq map[string]int) *ContextDictionary {
	return &ContextDictionary{Exact: exact, Derived: derived, nameFreq: nameFreq}
}

// NameTokens are the distinct tokens of an entity's label and aliases, the
// unit NewContextDictionary counts names by (a token's NameFreq is the
// number of entities whose NameTokens hold it).
func NameTokens(e Entity) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range append([]string{e.Label}, e.Aliases...) {
		for _, t := range Tokenize(n) {
			if !seen[t.Norm] {
				seen[t.Norm] = true
				out = append(out, t.Norm)
			}
		}
	}
	return out
}

// FormsVersion names the rules of an entity's linking forms
// (EntityDerivedForms, NameTokens and the backends' exact names): a store
// that keeps the forms it was loaded with (Neo4j) recomputes those written
// under another version. Change it with the rules.
const FormsVersion = "forms-3"

// EntityDerivedForms are the distinct DerivedForms of an entity's label and
// aliases, label first, with each name of an "X or Y" label, a personal
// name's surname and initial forms and a name written as one word; then its
// lead names and their forms. NewContextDictionary keeps those no entity
// has as an exact form.
func EntityDerivedForms(e Entity) []string {
	var out []string
	own := 1 + len(e.Aliases)
	names := append(append([]string{e.Label}, e.Aliases...), e.LeadNames...)
	for i, n := range names {
		if i >= own {
			// A lead name itself is only a derived form (kg.LeadNames).
			if f := NormalizeForm(n); Linkable(f) && len(f) >= 3 {
				out = append(out, f, Fold(f))
			}
		}
		out = append(out, DerivedForms(n)...)
		out = append(out, surnameForms(n)...)
		out = append(out, initialForms(n)...)
		out = append(out, alternativeNameForms(n)...)
		out = append(out, squashedForms(n)...)
	}
	return lo.Uniq(out)
}

// minSquashed is the shortest squashed form kept: shorter ones ("theband")
// could be words.
const minSquashed = 8

// squashedForms is a name of two or more words written as one, and its
// folded form ("Michael Aaron Einziger" -> "michaelaaroneinziger"): how
// user names and hashtags write a name ("what type of rock does
// michaelaaroneinziger play", "which label is lilboosie signed to").
func squashedForms(name string) []string {
	toks := Tokenize(name)
	if len(toks) < 2 {
		return nil
	}
	var b strings.Builder
	for _, t := range toks {
		b.WriteString(t.Norm)
	}
	s := b.String()
	if utf8.RuneCountInString(s) < minSquashed {
		return nil
	}
	return []string{s, Fold(s)}
}

// surnameForms is a personal name's surname alone ("Obama's wife", "what
// did Kandinsky paint"), at least four letters, and its folded form: the
// weakest form, kept only when the question links nothing more confident
// (ResolveConfident), the context choosing among the entities that share it.
func surnameForms(name string) []string {
	_, last, ok := firstAndSurname(name)
	if !ok {
		return nil
	}
	return []string{last, Fold(last)}
}

// initialForms key a personal name by its first name's initial and its
// surname ("Daniel Robert Elfman" -> "d. elfman"), so that a question's
// short or familiar first name finds it ("danny elfman", "joe elliott", "al
// pacino": InitialForm). The period keeps the key apart from every
// normalised form, which has none. The surname is that of surnameForms.
func initialForms(name string) []string {
	first, last, ok := firstAndSurname(name)
	if !ok {
		return nil
	}
	f := InitialForm(first, last)
	return []string{f, Fold(f)}
}

// firstAndSurname are a personal name's first name and surname (normalised),
// when it is one (personName) and its surname has at least four letters and
// is no stopword.
func firstAndSurname(name string) (first, last string, ok bool) {
	toks := Tokenize(name)
	if len(toks) < 2 {
		return "", "", false
	}
	ws, ok := personName(name, toks)
	if !ok {
		return "", "", false
	}
	last = ws[len(ws)-1]
	if len([]rune(last)) < 4 || stopwords[last] {
		return "", "", false
	}
	return ws[0], last, true
}

// InitialForm is the initial form of a first name and a surname, as
// initialForms stores it and a question's two-token span asks for it.
func InitialForm(first, surname string) string {
	r, _ := utf8.DecodeRuneInString(first)
	return string(r) + ". " + surname
}

// initialProbe is the initial form a question's span of tokens i and i+1
// asks for when the span itself is no form ("danny elfman" -> "d. elfman"):
// a first word of at least two letters that is no stopword, and a second
// of at least four. ok is false for other spans.
func initialProbe(toks []Token, i int) (string, bool) {
	if i+1 >= len(toks) {
		return "", false
	}
	first, last := toks[i].Norm, toks[i+1].Norm
	if utf8.RuneCountInString(first) < 2 || stopwords[first] || utf8.RuneCountInString(last) < 4 || stopwords[last] {
		return "", false
	}
	return InitialForm(first, last), true
}

// InitialProbes are the initial forms text's two-token spans may ask for
// (with their folded forms): a backend that looks forms up per text fetches
// these too.
func InitialProbes(toks []Token) []string {
	var out []string
	for i := range toks {
		if f, ok := initialProbe(toks, i); ok {
			out = append(out, f, Fold(f))
		}
	}
	return out
}

// alternativeNameForms are the forms of each name of an "X or Y" label
// ("Kiev or Kyiv", "Johann von Vásáry or János Vaszary"): labels taken from
// a Wikipedia extract's first words name the entity twice.
func alternativeNameForms(name string) []string {
	parts := strings.Split(name, " or ")
	if len(parts) < 2 {
		return nil
	}
	var out []string
	for _, part := range parts {
		if f := NormalizeForm(part); Linkable(f) && len(f) >= 3 {
			out = append(out, f, Fold(f))
		}
		out = append(out, DerivedForms(part)...)
	}
	return out
}

// content counts the content tokens of form and, when there is one, the
// names that hold it.
func (d *ContextDictionary) content(form string) (n, freq int) {
	var last string
	for _, w := range strings.Fields(form) {
		if !stopwords[w] {
			n, last = n+1, w
		}
	}
	if n == 1 {
		freq = d.nameFreq[last]
	}
	return n, freq
}

// Candidates lists the spans of text that have candidates.
func (d *ContextDictionary) Candidates(text string) ([]Token, []SpanCandidates) {
	toks := Tokenize(text)
	var out []SpanCandidates
	eachSpan(toks, func(i, n int, f string) {
		if !Linkable(f) {
			return
		}
		cs := d.Exact[f]
		if len(cs) == 0 {
			cs = d.Derived[f]
		}
		if len(cs) == 0 {
			cs = d.Derived[Fold(f)]
		}
		form := f
		if len(cs) == 0 && n == 1 {
			// no form: perhaps a first name and a surname ("danny elfman")
			if p, ok := initialProbe(toks, i); ok {
				if cs = d.Derived[p]; len(cs) == 0 {
					cs = d.Derived[Fold(p)]
				}
				form = p
			}
		}
		if len(cs) == 0 {
			return
		}
		sc := SpanCandidates{I: i, N: n + 1, Form: form, Cands: cs}
		sc.Content, sc.NameFreq = d.content(f)
		out = append(out, sc)
	})
	return toks, out
}

// ConfidenceParams weigh the features of a mention's confidence, a logistic
// function of
//
//	Bias + Alias (alias form) + Derived (derived form) + Tokens*(content tokens-1, at most 3)
//	- Shared*ln(entities sharing the form) - Generic*ln(1+NameFreq) (one content token)
//	+ Degree*ln(1+degree)
//
// Mentions below Threshold are dropped, the most confident one kept.
// Context weighs the context score (the cosine between the question and the
// entity's document) when one form has several entities: it chooses among
// them, and is left out of the confidence, which was tuned without it.
type ConfidenceParams struct {
	Bias, Alias, Derived, Tokens, Shared, Generic, Degree float64
	Context, Threshold                                    float64
	// TypePosition is subtracted from a one-word span that opens the
	// question's wh-phrase ("which musician plays the guitar", "who is a
	// famous mathematician"): there a class word names the answer's type,
	// not the entity the question is about (answerTypeSpan).
	TypePosition float64
}

// DefaultConfidenceParams were tuned for linking F1 on kgqa train (a grid
// over the weights and the threshold; Shared and Degree came out 0). The
// context weight is not tuned: it only breaks ties between the entities of
// one form. TypePosition was chosen on kgqa train among 1, 2 and 3
// (linking F1 .857 -> .863, .866, .866; dmar R@5 .700 at each, R@10 .761
// -> .763).
func DefaultConfidenceParams() ConfidenceParams {
	return ConfidenceParams{
		Bias: 2, Alias: 0, Derived: -2, Tokens: 2, Shared: 0, Generic: 0.25, Degree: 0,
		Context: 4, Threshold: 0.9, TypePosition: 2,
	}
}

func (p ConfidenceParams) logit(s SpanCandidates, c Candidate) float64 {
	z := p.Bias + p.Tokens*float64(min(s.Content-1, 3))
	switch {
	case c.Derived:
		z += p.Derived
	case !c.IsLabel:
		z += p.Alias
	}
	z -= p.Shared * math.Log(float64(len(s.Cands)))
	z -= p.Generic * math.Log1p(float64(s.NameFreq))
	z += p.Degree * math.Log1p(float64(c.Degree))
	return z
}

// answerTypeSpan reports whether the span starting at token i opens the
// question's wh-phrase: the tokens before it are a wh-word ("which",
// "what", "who", "name", "list") followed only by copulas, articles and
// words such as "famous" or "female" ("who is a famous", "whats the").
func answerTypeSpan(toks []Token, i int) bool {
	if i == 0 || !whWords[toks[0].Norm] {
		return false
	}
	for _, t := range toks[1:i] {
		if !typeFillers[t.Norm] {
			return false
		}
	}
	return true
}

var whWords = map[string]bool{"which": true, "what": true, "whats": true, "who": true, "whos": true, "name": true, "list": true}

var typeFillers = map[string]bool{
	"is": true, "was": true, "are": true, "were": true, "s": true, "a": true, "an": true, "the": true, "some": true, "one": true,
	"famous": true, "known": true, "notable": true, "popular": true, "well": true, "female": true, "male": true, "kind": true, "type": true, "of": true,
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
// leftmost, no overlaps; but by content tokens before length) and chooses
// each span's entity by confidence (ctxScore: a context score per QID in [-1, 1], e.g. the cosine between
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
		shift := 0.0
		if s.Content == 1 && answerTypeSpan(toks, s.I) {
			shift = -p.TypePosition
		}
		choice := func(c Candidate) float64 { return p.logit(s, c) + shift + p.Context*ctxScore[c.QID] }
		pk := pick{s: s, best: s.Cands[0]}
		for _, c := range s.Cands[1:] {
			if a, b := choice(c), choice(pk.best); a > b || (a == b && better(c, pk.best)) {
				pk.best = c
			}
		}
		pk.z = p.logit(s, pk.best) + shift
		picks = append(picks, pk)
	}
	// Spans with more content tokens go first, then longer, then leftmost:
	// an article must not let "the african" take "african" from "african
	// american".
	sort.SliceStable(picks, func(a, b int) bool {
		if picks[a].s.Content != picks[b].s.Content {
			return picks[a].s.Content > picks[b].s.Content
		}
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
	sort.Slice(out, func(a, b int) bool { return out[a].Start < out[b].Start })
	top := 0
	for i, m := range out {
		if m.Confidence > out[top].Confidence {
			top = i // ties: the earlier mention
		}
	}
	kept := out[:0:0]
	for i, m := range out {
		if i == top || m.Confidence >= p.Threshold {
			kept = append(kept, m)
		}
	}
	return kept
}
