package kg

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNormalizeForm(t *testing.T) {
	cases := map[string]string{
		"U.S.A.":                 "u s a",
		"  Christopher   Nolan ": "christopher nolan",
		"Ireland, Republic of":   "ireland republic of",
		"Éire":                   "éire",
		"Nolan's":                "nolan s",
		"":                       "",
		"--":                     "",
	}
	for in, want := range cases {
		if got := NormalizeForm(in); got != want {
			t.Errorf("NormalizeForm(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDictionaryLinkRules(t *testing.T) {
	d := NewDictionary([]Entity{
		{QID: "Q1", Label: "New York", Degree: 5},
		{QID: "Q2", Label: "New York City", Degree: 3},
		{QID: "Q3", Label: "York", Degree: 9},
		{QID: "Q4", Label: "Paris", Degree: 1},
		{QID: "Q5", Label: "Paris Hilton", Aliases: []string{"Paris"}, Degree: 50}, // alias loses to a label
		{QID: "Q6", Label: "Mercury", Degree: 7},
		{QID: "Q7", Label: "Mercury", Degree: 7}, // same label, same degree: lower QID wins
		{QID: "Q8", Label: "Canada", Aliases: []string{"can"}},
	})
	text := "From New York City to PARIS, can Mercury shine in York?"
	got := d.Link(text)
	want := []Mention{
		{QID: "Q2", Surface: "New York City", Start: 5, End: 18},
		{QID: "Q4", Surface: "PARIS", Start: 22, End: 27},
		{QID: "Q6", Surface: "Mercury", Start: 33, End: 40},
		{QID: "Q3", Surface: "York", Start: 50, End: 54},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Link (-want +got):\n%s", diff)
	}
	if q := QIDs(append(got, got[0])); len(q) != 4 || q[0] != "Q2" {
		t.Errorf("QIDs = %v, want 4 distinct in first-mention order", q)
	}
}

func TestLinkable(t *testing.T) {
	for form, want := range map[string]bool{"the": false, "a": false, "x": false, "of the": false, "the matrix": true, "ai": true} {
		if got := Linkable(form); got != want {
			t.Errorf("Linkable(%q) = %v, want %v", form, got, want)
		}
	}
}
