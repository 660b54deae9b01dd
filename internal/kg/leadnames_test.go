package kg

import (
	"reflect"
	"testing"
)

// The leads below are codexm's own (../shared/data/codexm/corpus.jsonl),
// cut after the part that matters.
func TestLeadNames(t *testing.T) {
	for _, c := range []struct {
		lead string
		want []string
	}{
		{"José Antonio Domínguez Bandera (born 10 August 1960), known professionally as Antonio Banderas, is a Spanish actor", []string{"Antonio Banderas"}},
		{"Steven Ellison (born October 7, 1983), known by his stage name Flying Lotus or sometimes FlyLo, is an American record producer", []string{"Flying Lotus", "FlyLo"}},
		{"Torrence Hatch Jr. (born November 14, 1982), better known by his stage name Boosie Badazz or simply Boosie (formerly Lil Boosie), is an American rapper", []string{"Boosie Badazz", "Boosie", "Lil Boosie"}},
		{"Eric Hilliard Nelson (May 8, 1940 – December 31, 1985), known professionally as Ricky Nelson until his 21st birthday", []string{"Ricky Nelson"}},
		{"Malawi, officially the Republic of Malawi, formerly known as Nyasaland. It is a landlocked country", []string{"Nyasaland"}},
		{"John Ronald Reuel Tolkien, known as J. R. R. Tolkien, was an English writer", []string{"J. R. R. Tolkien"}},
		{"Ludwig van Beethoven, also known as Ludwig van Beethoven of Bonn, was", []string{"Ludwig van Beethoven of Bonn"}},
		// A birth name, a date after a naming phrase, a lower-case phrase and
		// a "-born" compound give no name.
		{"Rhonda Fleming (born Marilyn Louis; August 10, 1923) is a retired American film actress", nil},
		{"Lee Smith, known as of November 1982 for his work, and known as the father of jazz", nil},
		{"The Detroit-born Motown Records founder", nil},
		{"", nil},
	} {
		if got := LeadNames(c.lead); !reflect.DeepEqual(got, c.want) {
			t.Errorf("LeadNames(%q) = %q, want %q", c.lead, got, c.want)
		}
	}
}

// TestLeadNamesReadOnlyTheLead: a naming phrase deep in a long text is not
// the subject's name.
func TestLeadNamesReadOnlyTheLead(t *testing.T) {
	long := "Some Person was a writer. "
	for len(long) < 2*leadWindow {
		long += "She wrote many books and essays. "
	}
	if got := LeadNames(long + "Her son, known as Little Person, was"); got != nil {
		t.Errorf("LeadNames read past the lead: %q", got)
	}
}

// TestEntityDerivedFormsHoldLeadNames: a lead name and its personal-name
// forms are derived forms of the entity; its exact forms stay the label
// and aliases.
func TestEntityDerivedFormsHoldLeadNames(t *testing.T) {
	e := Entity{QID: "Q41548", Label: "José Antonio Domínguez Bandera", LeadNames: []string{"Antonio Banderas"}}
	forms := map[string]bool{}
	for _, f := range EntityDerivedForms(e) {
		forms[f] = true
	}
	for _, want := range []string{"antonio banderas", "banderas", "a. banderas"} {
		if !forms[want] {
			t.Errorf("derived forms lack %q: %v", want, EntityDerivedForms(e))
		}
	}
	if d := NewDictionary([]Entity{e}); d["antonio banderas"] != nil {
		t.Errorf("a lead name became an exact form: %+v", d["antonio banderas"])
	}
}

// TestSquashedForms: a name of two or more words is also a derived form
// written as one word (user names in questions: "michaelaaroneinziger",
// and a lead name's "lilboosie"), folded too; one shorter than minSquashed
// letters ("boli") or of one word is not.
func TestSquashedForms(t *testing.T) {
	e := Entity{QID: "Q166454", Label: "Torrence Hatch Jr.", LeadNames: []string{"Lil Boosie"}, Aliases: []string{"Zoë Bellamy", "Zoë Bell", "Bo Li", "Boosie"}}
	forms := map[string]bool{}
	for _, f := range EntityDerivedForms(e) {
		forms[f] = true
	}
	for _, want := range []string{"torrencehatchjr", "lilboosie", "zoëbellamy", "zoebellamy"} {
		if !forms[want] {
			t.Errorf("derived forms lack %q: %q", want, EntityDerivedForms(e))
		}
	}
	for _, not := range []string{"boli", "zoëbell", "zoebell"} {
		if forms[not] {
			t.Errorf("%q is a squashed form, but shorter than %d letters", not, minSquashed)
		}
	}
}
