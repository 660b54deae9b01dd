package kg

import (
	"slices"
	"testing"
)

func TestDerivedForms(t *testing.T) {
	for name, want := range map[string][]string{
		"Julius Robert Oppenheimer":  {"julius robert", "julius oppenheimer", "robert oppenheimer"},
		"Gérard Xavier Depardieu":    {"gerard xavier depardieu", "gérard xavier", "gerard xavier", "gérard depardieu", "gerard depardieu", "xavier depardieu"},
		"Harold Clayton Lloyd Sr.":   {"harold clayton", "harold lloyd", "clayton lloyd"},
		"Count Adam Stefan Zamoyski": {"adam stefan", "adam zamoyski", "stefan zamoyski"},
		"The Las Vegas Story":        {"las vegas story"},
		"José Martiniano de Alencar": {"jose martiniano de alencar", "josé martiniano", "jose martiniano", "josé alencar", "jose alencar", "de alencar"},
		"A slasher film":             {"slasher film", "a slasher movie", "slasher movie"},
		"The Band":                   nil, // one token left: never derived
		"Canada":                     nil,
		"music of Canada":            nil, // not a personal name
	} {
		if got := DerivedForms(name); !slices.Equal(got, want) {
			t.Errorf("DerivedForms(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestResolveConfident(t *testing.T) {
	es := []Entity{
		{QID: "Q1", Label: "Julius Robert Oppenheimer", Degree: 30},
		{QID: "Q2", Label: "music", Degree: 400},
		{QID: "Q3", Label: "A slasher film", Degree: 5},
		{QID: "Q4", Label: "music of Canada", Degree: 1},
		{QID: "Q5", Label: "Canadian music", Aliases: []string{"music"}, Degree: 1},
	}
	d := NewContextDictionary(es, NewDictionary(es))
	text := "which slasher movie did robert oppenheimer like, with music"
	toks, spans := d.Candidates(text)
	p := DefaultConfidenceParams()
	p.Threshold = 0
	ms := ResolveConfident(text, toks, spans, nil, p)
	if got := QIDs(ms); !slices.Equal(got, []string{"Q3", "Q1", "Q2"}) {
		t.Fatalf("linked %v (%+v)", got, ms)
	}
	for _, m := range ms {
		if m.Confidence <= 0 || m.Confidence >= 1 {
			t.Fatalf("confidence %v", m.Confidence)
		}
	}
	// The context score decides between the two entities of "music".
	if ms := ResolveConfident(text, toks, spans, map[string]float64{"Q5": 1, "Q2": -1}, p); ms[2].QID != "Q5" {
		t.Fatalf("context did not pick Q5: %+v", ms)
	}
	// A threshold above every confidence keeps the most confident mention only.
	p.Threshold = 1
	if ms := ResolveConfident(text, toks, spans, nil, p); len(ms) != 1 {
		t.Fatalf("kept %+v", ms)
	}
	if ms := ResolveConfident("nothing", nil, nil, nil, p); len(ms) != 0 {
		t.Fatalf("no spans: %+v", ms)
	}
}

// A label that names the entity twice ("X or Y") links by either name;
// a personal name also by its surname.
func TestEntityDerivedFormsSplitAlternativeNames(t *testing.T) {
	got := EntityDerivedForms(Entity{QID: "Q1", Label: "Johann von Vásáry or János Vaszary"})
	for _, f := range []string{"johann von vásáry", "johann von vasary", "jános vaszary", "janos vaszary"} {
		if !slices.Contains(got, f) {
			t.Errorf("derived forms %q lack %q", got, f)
		}
	}
	if got := EntityDerivedForms(Entity{QID: "Q2", Label: "Kiev or Kyiv"}); !slices.Contains(got, "kyiv") || !slices.Contains(got, "kiev") {
		t.Errorf("Kiev or Kyiv: derived forms %q", got)
	}
	if got := EntityDerivedForms(Entity{QID: "Q4", Label: "Barack Obama"}); !slices.Contains(got, "obama") || slices.Contains(got, "barack") {
		t.Errorf("Barack Obama: derived forms %q, want the surname alone", got)
	}
	if got := EntityDerivedForms(Entity{QID: "Q5", Label: "Tom Ek"}); slices.Contains(got, "ek") {
		t.Errorf("a surname under four letters is too ambiguous to link alone: %q", got)
	}
	if got := EntityDerivedForms(Entity{QID: "Q3", Label: "Oregon"}); len(got) != 0 {
		t.Errorf("Oregon has no derived forms, got %q", got)
	}
}

// A span with more content words wins an overlap against a longer one
// padded by an article: "the african" must not take "african" from
// "african american".
func TestResolveConfidentPrefersContentOverArticles(t *testing.T) {
	es := []Entity{
		{QID: "Q1", Label: "The African", Degree: 79},
		{QID: "Q2", Label: "African Americans", Aliases: []string{"African American"}, Degree: 655},
	}
	d := NewContextDictionary(es, NewDictionary(es))
	p := DefaultConfidenceParams()
	p.Threshold = 0
	if got := linked(d, "name a singer of the african american ethnicity", p); !slices.Equal(got, []string{"Q2"}) {
		t.Fatalf("linked %v, want [Q2]", got)
	}
}

// A familiar first name before a surname finds the full name through its
// initial form, and a generic word the question also holds no longer wins.
func TestInitialFormsLinkFamiliarFirstNames(t *testing.T) {
	es := []Entity{
		{QID: "Q1", Label: "Daniel Robert Elfman", Degree: 40},
		{QID: "Q2", Label: "music", Degree: 900},
		{QID: "Q3", Label: "Joseph Thomas Elliott", Degree: 12},
		{QID: "Q4", Label: "Elliott", Degree: 3}, // a surname that is a label of its own
	}
	for _, f := range []string{"d. elfman", "j. elliott"} {
		if !slices.Contains(EntityDerivedForms(es[0]), f) && !slices.Contains(EntityDerivedForms(es[2]), f) {
			t.Errorf("no entity has the initial form %q", f)
		}
	}
	d := NewContextDictionary(es, NewDictionary(es))
	for text, want := range map[string][]string{
		"What film did danny elfman contribute music to?": {"Q1"},
		"What type of music did joe elliott make":         {"Q3"},
		"what did elfman compose":                         {"Q1"}, // the surname alone, as before
		"what music is the saxophone used in":             {"Q2"}, // no probe of "the saxophone"
	} {
		if got := linked(d, text, DefaultConfidenceParams()); !slices.Equal(got, want) {
			t.Errorf("%q linked %v, want %v", text, got, want)
		}
	}
	if got := InitialProbes(Tokenize("the elfman and danny elfman")); !slices.Equal(got, []string{"d. elfman", "d. elfman"}) { // stopwords ask for nothing
		t.Errorf("probes %q", got)
	}
}

// A class word that opens the wh-phrase names the answer's type: the
// question is about the other entity.
func TestTypePositionPrefersTheTopic(t *testing.T) {
	es := []Entity{
		{QID: "Q1", Label: "musician", Degree: 300},
		{QID: "Q2", Label: "guitar", Degree: 200},
		{QID: "Q3", Label: "mathematician", Degree: 100},
		{QID: "Q4", Label: "Barack Obama", Degree: 50},
	}
	d := NewContextDictionary(es, NewDictionary(es))
	off := DefaultConfidenceParams()
	off.TypePosition = 0
	for _, c := range []struct {
		text    string
		want    []string // with the default params
		wantOff []string // without the type position
	}{
		{"which musician plays the guitar", []string{"Q2"}, []string{"Q1"}},
		{"who is a famous musician that plays guitar", []string{"Q2"}, []string{"Q1"}},
		{"name a mathematician", []string{"Q3"}, []string{"Q3"}},                 // the only mention stays
		{"who is barack obama's guitar teacher", []string{"Q4"}, []string{"Q4"}}, // names are not class words
		{"what guitar does the musician play", []string{"Q1"}, []string{"Q2"}},
	} {
		if got := linked(d, c.text, DefaultConfidenceParams()); !slices.Equal(got, c.want) {
			t.Errorf("%q linked %v, want %v", c.text, got, c.want)
		}
		if got := linked(d, c.text, off); !slices.Equal(got, c.wantOff) {
			t.Errorf("%q without the type position linked %v, want %v", c.text, got, c.wantOff)
		}
	}
}

// linked are the QIDs d's candidates for text resolve to under p.
func linked(d *ContextDictionary, text string, p ConfidenceParams) []string {
	toks, spans := d.Candidates(text)
	return QIDs(ResolveConfident(text, toks, spans, nil, p))
}
