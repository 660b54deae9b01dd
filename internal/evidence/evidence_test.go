package evidence

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// wordEncoder embeds a text as counts of a few words, so that a sentence
// scores by the question's words it holds: enough to check the selection's
// logic without a model.
type wordEncoder struct {
	calls, texts int
	err          error
}

var vocab = []string{"capital", "france", "paris", "river", "seine", "population", "film", "director", "nolan"}

func (e *wordEncoder) Encode(_ context.Context, texts []string) ([][]float32, error) {
	e.calls++
	e.texts += len(texts)
	if e.err != nil {
		return nil, e.err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(vocab)+1)
		v[len(vocab)] = 0.01 // no zero vectors
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return r < 'a' || r > 'z' }) {
			if j := slices.Index(vocab, w); j >= 0 {
				v[j]++
			}
		}
		out[i] = v
	}
	return out, nil
}

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"One. Two! Three? Four", []string{"One.", "Two!", "Three?", "Four"}},
		{"No boundary at all", []string{"No boundary at all"}},
		{"Dr.Who is 3.5 m. Next.", []string{"Dr.Who is 3.5 m.", "Next."}},
		{"", []string{""}},
		{"Ends. ", []string{"Ends.", ""}},
	} {
		if got := Split(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Split(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

var docs = []Doc{
	{ID: "Q90", Title: "Paris", Text: "Paris is a city. It has a large population. Paris is the capital of France. The Seine river flows through Paris."},
	{ID: "Q142", Title: "France", Text: "France is a country. Its capital is Paris."},
	{ID: "Q1", Title: "Film", Text: "A film by Nolan. The director was Nolan."},
}

func TestSelectKeepsTheBestWithinTheBudget(t *testing.T) {
	enc := &wordEncoder{}
	ev, err := Select(context.Background(), enc, "What is the capital of France?", docs, Config{Tokens: 40})
	if err != nil {
		t.Fatal(err)
	}
	if enc.calls != 1 {
		t.Errorf("%d encoder calls, want one batched call", enc.calls)
	}
	if len(ev) == 0 || !slices.ContainsFunc(ev, func(s Sentence) bool { return s.Doc == "Q90" && s.Index == 2 }) {
		t.Fatalf("the answering sentence (Q90 #2) is not selected: %+v", ev)
	}
	// Within the budget, headers counted once per document.
	used, seen := 0, map[string]bool{}
	for _, s := range ev {
		if !seen[s.Doc] {
			seen[s.Doc] = true
			used += Tokens(Header(s.Doc, s.Title)) + 1
		}
		used += Tokens(s.Text) + 1
		// Each sentence is its document's, at its index.
		for _, d := range docs {
			if d.ID == s.Doc && Split(d.Text)[s.Index] != s.Text {
				t.Errorf("%s #%d is %q, not the document's sentence", s.Doc, s.Index, s.Text)
			}
		}
	}
	if used > 40 {
		t.Errorf("selected %d tokens, budget 40: %+v", used, ev)
	}
	// Document order, then text order.
	for i := 1; i < len(ev); i++ {
		a, b := ev[i-1], ev[i]
		ia := slices.IndexFunc(docs, func(d Doc) bool { return d.ID == a.Doc })
		ib := slices.IndexFunc(docs, func(d Doc) bool { return d.ID == b.Doc })
		if ia > ib || (ia == ib && a.Index >= b.Index) {
			t.Errorf("out of order: %+v before %+v", a, b)
		}
	}
	// The off-topic film sentences lose to the answering ones.
	if slices.ContainsFunc(ev, func(s Sentence) bool { return s.Doc == "Q1" }) && !slices.ContainsFunc(ev, func(s Sentence) bool { return s.Doc == "Q142" && s.Index == 1 }) {
		t.Errorf("an off-topic sentence was chosen before an answering one: %+v", ev)
	}
}

func TestSelectBudgetAndBounds(t *testing.T) {
	enc := &wordEncoder{}
	small, err := Select(context.Background(), enc, "capital of France", docs, Config{Tokens: 12})
	if err != nil {
		t.Fatal(err)
	}
	big, err := Select(context.Background(), enc, "capital of France", docs, Config{Tokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if len(small) == 0 || len(small) >= len(big) {
		t.Errorf("a budget of 12 tokens gave %d sentences, 2,000 gave %d", len(small), len(big))
	}
	n := 0
	for _, d := range docs[:2] {
		for _, s := range Split(d.Text) {
			if strings.TrimSpace(s) != "" {
				n++
			}
		}
	}
	// Docs bounds the documents that compete.
	two, _ := Select(context.Background(), enc, "capital of France", docs, Config{Tokens: 2000, Docs: 2})
	if len(two) != n {
		t.Errorf("Docs 2 with an ample budget: %d sentences, want the %d of the first two documents", len(two), n)
	}
	// A document with no sentence end is one sentence, clipped.
	long := strings.Repeat("word ", 400)
	ev, err := Select(context.Background(), enc, "word", []Doc{{ID: "d", Title: "t", Text: long}}, Config{Tokens: 2000, SentenceChars: 100})
	if err != nil || len(ev) != 1 || utf8.RuneCountInString(ev[0].Text) > 104 || !strings.HasSuffix(ev[0].Text, "...") {
		t.Errorf("one long sentence: %v %+v", err, ev)
	}
	// PerDoc bounds what one document costs the encoder.
	many := strings.Repeat("Paris is the capital. ", 500)
	enc2 := &wordEncoder{}
	if _, err := Select(context.Background(), enc2, "capital", []Doc{{ID: "d", Title: "t", Text: many}}, Config{PerDoc: 30}); err != nil || enc2.texts != 31 {
		t.Errorf("PerDoc 30: %d texts encoded (%v), want 31", enc2.texts, err)
	}
}

func TestSelectFactsFirstAndCited(t *testing.T) {
	in := []Doc{
		{ID: "Q50001", Title: "Italian people", Text: "Italians are a Romance ethnic group.", Facts: []string{"Roberto Benigni - ethnic group - Italian people"}},
		{ID: "Q19356", Title: "Pinocchio", Text: "Pinocchio is a 2002 film.", Facts: []string{"Pinocchio - cast member - Roberto Benigni", "x - y - z"}},
	}
	ev, err := Select(context.Background(), &wordEncoder{}, "which people does roberto benigni belong to", in, Config{Tokens: 200})
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) < 2 || !ev[0].Fact || ev[0].Doc != "Q50001" || ev[0].Index != -1 || ev[0].Text != in[0].Facts[0] {
		t.Fatalf("the first document's fact must come first, cited by its id: %+v", ev)
	}
	facts := 0
	for _, s := range ev {
		if s.Fact {
			facts++
		}
	}
	if facts != 2 {
		t.Errorf("%d facts shown, want the default bound 2", facts)
	}
	none, _ := Select(context.Background(), &wordEncoder{}, "q", in, Config{Tokens: 200, Facts: -1})
	if slices.ContainsFunc(none, func(s Sentence) bool { return s.Fact }) {
		t.Errorf("Facts -1 shows no facts: %+v", none)
	}
}

func TestSelectErrors(t *testing.T) {
	if _, err := Select(context.Background(), nil, "q", docs, Config{}); !errors.Is(err, ErrNoEncoder) {
		t.Errorf("no encoder: %v", err)
	}
	if _, err := Select(context.Background(), &wordEncoder{err: errors.New("boom")}, "q", docs, Config{}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("encoder failure: %v", err)
	}
	ev, err := Select(context.Background(), &wordEncoder{}, "", nil, Config{})
	if err != nil || len(ev) != 0 {
		t.Errorf("no documents: %v %+v", err, ev)
	}
	ev, err = Select(context.Background(), &wordEncoder{}, "q", []Doc{{ID: "d", Title: "t", Text: "   "}}, Config{})
	if err != nil || len(ev) != 0 {
		t.Errorf("a blank document: %v %+v", err, ev)
	}
}

func TestFactLines(t *testing.T) {
	for _, c := range []struct {
		path  string
		steps []Step
		want  []string
	}{
		{"Roberto Benigni -[ethnic group]-> Italian people", []Step{{Relation: "ethnic group"}}, []string{"Roberto Benigni - ethnic group - Italian people"}},
		{"Roberto Benigni -[cast member of]-> Pinocchio", []Step{{Relation: "cast member", Backward: true}}, []string{"Pinocchio - cast member - Roberto Benigni"}},
		// A forward relation whose label ends in "of" is not read as backward.
		{"Rome -[part of]-> Italy", []Step{{Relation: "part of"}}, []string{"Rome - part of - Italy"}},
		{"A -[director of]-> Film -[spouse]-> B", []Step{{Relation: "director", Backward: true}, {Relation: "spouse"}}, []string{"Film - director - A", "Film - spouse - B"}},
		{"A -[x]-> B", []Step{{Relation: "y"}}, nil},
		{"A -[x]-> ", []Step{{Relation: "x"}}, nil},
		{"A -[x]-> B", nil, nil},
	} {
		if got := FactLines(c.path, c.steps); !slices.Equal(got, c.want) {
			t.Errorf("FactLines(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}

func TestRender(t *testing.T) {
	var b strings.Builder
	Render(&b, []Sentence{{Doc: "Q1", Title: "A", Text: "a - r - b", Fact: true, Index: -1}, {Doc: "Q1", Title: "A", Text: "One."}, {Doc: "Q2", Title: "B", Text: "Two."}})
	if want := "[Q1] A: a - r - b. One.\n[Q2] B: Two.\n"; b.String() != want {
		t.Errorf("Render = %q, want %q", b.String(), want)
	}
}
