package kgtest

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
)

// RunCandidateLinker checks the kg.CandidateLinker port of cl, which must
// hold exactly the bundle in dir: every span's candidates, exact and
// derived, and the name frequencies, as kg.NewContextDictionary over the
// bundle gives them.
func RunCandidateLinker(t *testing.T, dir string, cl kg.CandidateLinker) {
	t.Helper()
	ctx := context.Background()
	b, err := bundle.Read(ctx, dir)
	if err != nil {
		t.Fatalf("read bundle: %v", err)
	}
	ents := withDegrees(b.Entities, newReference(b).degree)
	exact := kg.NewDictionary(ents)
	ref := kg.NewContextDictionary(ents, exact)
	texts := linkerTexts(ents, ref)
	squashed := squashedNames(ents)
	lead := map[string]bool{} // the lead names' own forms (kg.LeadNames)
	for _, e := range ents {
		for _, n := range e.LeadNames {
			lead[kg.NormalizeForm(n)] = true
		}
	}
	var derived, generic, shared, initial, leadNamed, oneWord int
	for _, text := range texts {
		wantToks, want := ref.Candidates(text)
		gotToks, got, err := cl.LinkCandidates(ctx, text)
		if err != nil {
			t.Fatalf("LinkCandidates(%q): %v", text, err)
		}
		if diff := cmp.Diff(wantToks, gotToks); diff != "" {
			t.Errorf("LinkCandidates(%q) tokens (-want +got):\n%s", text, diff)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("LinkCandidates(%q) spans (-want +got):\n%s", text, diff)
		}
		for _, s := range want {
			if s.Cands[0].Derived {
				derived++
			}
			if s.NameFreq > 1 {
				generic++
			}
			if len(s.Cands) > 1 {
				shared++
			}
			if strings.Contains(s.Form, ". ") {
				initial++
			}
			if lead[s.Form] && s.Cands[0].Derived {
				leadNamed++
			}
			if s.Cands[0].Derived && squashed[s.Form] {
				oneWord++
			}
		}
	}
	// The texts must reach what they are meant to test.
	if derived == 0 || generic == 0 || shared == 0 || initial == 0 {
		t.Errorf("texts reach %d derived, %d shared-token, %d ambiguous and %d initial-form spans; want some of each", derived, generic, shared, initial)
	}
	if oneWord == 0 {
		t.Error("no text reaches a one-word derived span (a name written as one word)")
	}
	if len(lead) > 0 && leadNamed == 0 {
		t.Errorf("the bundle gives %d lead names, but no text reaches one as a derived span", len(lead))
	}

	t.Run("CancelledContext", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		if _, _, err := cl.LinkCandidates(c, texts[0]); err == nil {
			t.Error("LinkCandidates with a cancelled context returned no error")
		}
	})
}

// squashedNames are the entities' names of two or more words written as
// one ("michaelaaroneinziger").
func squashedNames(ents []kg.Entity) map[string]bool {
	out := map[string]bool{}
	for _, e := range ents {
		for _, n := range append(append([]string{e.Label}, e.Aliases...), e.LeadNames...) {
			if f := kg.NormalizeForm(n); strings.Contains(f, " ") {
				out[strings.ReplaceAll(f, " ", "")] = true
			}
		}
	}
	return out
}

// linkerTexts are questions over the bundle's names: labels as written,
// derived forms (no article, film/movie swapped, folded, shortened personal
// names, lead names), forms several entities share, generic words, and texts that
// link nothing.
func linkerTexts(ents []kg.Entity, ref *kg.ContextDictionary) []string {
	var derivedForms, sharedForms []string
	for f, cs := range ref.Derived {
		if len(cs) > 0 {
			derivedForms = append(derivedForms, f)
		}
	}
	for f, cs := range ref.Exact {
		if len(cs) > 1 {
			sharedForms = append(sharedForms, f)
		}
	}
	sort.Strings(derivedForms)
	sort.Strings(sharedForms)
	texts := []string{
		"", "Who can say if it is us?", "what music genre is this film",
		"Which films did christopher nolan direct in the United States?",
	}
	pick := func(fs []string, n int, wrap string) {
		for i := 0; i < len(fs) && n > 0; i += len(fs)/n + 1 {
			texts = append(texts, strings.ReplaceAll(wrap, "%", fs[i]))
		}
	}
	pick(derivedForms, 30, "Where was % born, and what music did they make?")
	// A familiar first name before a surname asks for the initial form
	// ("d. elfman" from "dxy elfman").
	var initials []string
	for _, f := range derivedForms {
		if first, surname, ok := strings.Cut(f, ". "); ok && !strings.Contains(surname, " ") {
			initials = append(initials, first+"xy "+surname)
		}
	}
	pick(initials, 10, "What film did % score?")
	pick(sharedForms, 15, "Tell me about % please")
	var leadForms []string
	for _, e := range ents {
		for _, n := range e.LeadNames {
			if f := kg.NormalizeForm(n); len(ref.Derived[f]) > 0 {
				leadForms = append(leadForms, f)
			}
		}
	}
	sort.Strings(leadForms)
	pick(leadForms, 15, "Which label is % signed to?")
	// A name written as one word ("michaelaaroneinziger"), as user names are.
	var squashed []string
	for f := range squashedNames(ents) {
		if len(ref.Derived[f]) > 0 {
			squashed = append(squashed, f)
		}
	}
	sort.Strings(squashed)
	pick(squashed, 10, "What type of rock does % play")
	for i := 0; i < len(ents); i += len(ents)/30 + 1 {
		e := ents[i]
		texts = append(texts, "What is known about "+e.Label+" and its history?")
		if f := kg.Fold(e.Label); f != e.Label {
			texts = append(texts, "Is "+f+" famous?")
		}
	}
	return texts
}
