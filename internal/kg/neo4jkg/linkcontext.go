package neo4jkg

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/dmar-kg/dmar/cypher"
	"github.com/dmar-kg/dmar/internal/kg"
)

var _ kg.CandidateLinker = (*Store)(nil)

// ErrNoNameTokens is returned by LinkCandidates on a graph loaded before the
// context linker's forms were stored.
var ErrNoNameTokens = errors.New("neo4jkg: the graph has no name tokens for the context linker: run dmar load kg --graph URL --after-import to add them")

// LinkCandidates implements kg.CandidateLinker in one round trip
// (link_context.cypher): the exact and derived candidates of every form of
// text and of its folded form, and the name frequency of its tokens, from
// which a kg.ContextDictionary of just those forms answers as memkg's whole
// one does.
func (s *Store) LinkCandidates(ctx context.Context, text string) ([]kg.Token, []kg.SpanCandidates, error) {
	toks, forms := kg.Spans(text)
	if len(forms) == 0 {
		return toks, nil, ctx.Err()
	}
	want, keys := probeKeys(toks, forms)
	words := make([]string, 0, len(toks))
	for _, t := range toks {
		if !slices.Contains(words, t.Norm) {
			words = append(words, t.Norm)
		}
	}
	q := luceneQueries(keys)
	res, err := s.read(ctx, "link candidates", cypher.LinkContext, map[string]any{"exact": q, "derived": q, "tokens": words})
	if err != nil {
		return nil, nil, err
	}
	if len(res.Records) != 1 {
		return nil, nil, errors.New("neo4jkg: link candidates: no row")
	}
	v := res.Records[0].Values
	if v[3] != true {
		return nil, nil, ErrNoNameTokens
	}
	exact, derived := candidateDictionaries(v[0], v[1], want)
	freq := make(map[string]int, len(words))
	for _, x := range list(v[2]) {
		f := list(x)
		freq[str(f[0])] = integer(f[1])
	}
	t, spans := kg.ContextDictionaryOf(exact, derived, freq).Candidates(text)
	return t, spans, nil
}

// probeKeys are the forms to look up, each once in first-seen order (keys)
// and as a set (want): every span form, its folded form, and the initial
// probes.
func probeKeys(toks []kg.Token, forms []string) (want map[string]bool, keys []string) {
	want = make(map[string]bool, 2*len(forms))
	keys = make([]string, 0, 2*len(forms))
	for _, f := range forms {
		for _, k := range []string{f, kg.Fold(f)} {
			if !want[k] {
				want[k] = true
				keys = append(keys, k)
			}
		}
	}
	for _, k := range kg.InitialProbes(toks) { // "danny elfman" asks for "d. elfman"
		if !want[k] {
			want[k] = true
			keys = append(keys, k)
		}
	}
	return want, keys
}

// candidateDictionaries reads the query's exact and derived rows into the
// dictionaries of the wanted forms, each candidate once per form.
func candidateDictionaries(exactRows, derivedRows any, want map[string]bool) (exact, derived kg.Dictionary) {
	seen := map[[3]string]bool{} // (dictionary, form, QID): each candidate once
	add := func(d kg.Dictionary, which, form string, c kg.Candidate) {
		if k := [3]string{which, form, c.QID}; !seen[k] {
			seen[k] = true
			d[form] = append(d[form], c)
		}
	}
	exact = kg.Dictionary{}
	for _, x := range list(exactRows) {
		f := list(x)
		qid, labelForm, deg := str(f[0]), kg.NormalizeForm(str(f[1])), integer(f[3])
		for _, form := range strs(f[2]) {
			if want[form] {
				add(exact, "exact", form, kg.Candidate{QID: qid, IsLabel: form == labelForm, Degree: deg})
			}
		}
	}
	derived = kg.Dictionary{}
	for _, x := range list(derivedRows) {
		f := list(x)
		qid, deg := str(f[0]), integer(f[2])
		for _, form := range strs(f[1]) {
			// A form some entity has exactly is no derived form (kg.NewContextDictionary).
			if _, isExact := exact[form]; want[form] && !isExact {
				add(derived, "derived", form, kg.Candidate{QID: qid, Degree: deg, Derived: true})
			}
		}
	}
	// memkg lists each form's entities in QID order.
	for _, d := range []kg.Dictionary{exact, derived} {
		for _, cs := range d {
			slices.SortFunc(cs, func(a, b kg.Candidate) int { return strings.Compare(a.QID, b.QID) })
		}
	}
	return exact, derived
}
