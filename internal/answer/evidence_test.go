package answer

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/chat"
)

// countEncoder embeds a text by a few words' counts: enough to rank the
// sentences that hold the question's words first.
type countEncoder struct{ calls int }

func (e *countEncoder) Encode(_ context.Context, texts []string) ([][]float32, error) {
	e.calls++
	words := []string{"directed", "inception", "nolan", "born", "london"}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(words)+1)
		v[len(words)] = 0.01
		low := strings.ToLower(t)
		for j, w := range words {
			v[j] = float32(strings.Count(low, w))
		}
		out[i] = v
	}
	return out, nil
}

var nolanDocs = []Source{
	{ID: "Q25188", Title: "Inception", Text: "Inception is a 2010 science fiction film. It was directed by Christopher Nolan. The film stars Leonardo DiCaprio. It grossed over 800 million dollars worldwide."},
	{ID: "Q25191", Title: "Christopher Nolan", Text: "Christopher Nolan is a filmmaker. He was born in London.", Facts: []string{"Inception - director - Christopher Nolan"}},
	{ID: "Q1", Title: "Universe", Text: "The universe is everything."},
}

func TestEvidencePromptCitesShownDocuments(t *testing.T) {
	g := &fakeGen{reply: "Christopher Nolan [Q25188] [Q1]"}
	enc := &countEncoder{}
	a := New(Config{Generator: g, Encoder: enc})
	noFacts := slices.Clone(nolanDocs)
	noFacts[1].Facts = nil
	ans, err := a.Answer(context.Background(), "Who directed Inception?", noFacts, Options{EvidenceTokens: 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if enc.calls != 1 || ans.Source != SourceReader || len(ans.Evidence) == 0 {
		t.Fatalf("answer %+v, %d encoder calls", ans, enc.calls)
	}
	user := g.got[len(g.got)-1].Content
	if !strings.Contains(user, "It was directed by Christopher Nolan.") || strings.Contains(user, "grossed") {
		t.Errorf("the evidence is not the answering sentence within 30 tokens:\n%s", user)
	}
	// Every shown id heads its evidence; a citation of an unshown id is dropped.
	for _, id := range ans.Shown {
		if !strings.Contains(user, "["+id+"] ") {
			t.Errorf("shown %s is not in the prompt:\n%s", id, user)
		}
	}
	if slices.Contains(ans.Shown, "Q1") || !slices.Equal(ans.Citations, []string{"Q25188"}) || !slices.Equal(ans.Dropped, []string{"Q1"}) {
		t.Errorf("shown %v, citations %v, dropped %v", ans.Shown, ans.Citations, ans.Dropped)
	}
	// A fact is cited by its document's id.
	g2 := &fakeGen{reply: "Christopher Nolan [Q25191]"}
	ans, err = New(Config{Generator: g2, Encoder: enc}).Answer(context.Background(), "Who directed Inception?", nolanDocs, Options{EvidenceTokens: 60}, nil)
	if err != nil {
		t.Fatal(err)
	}
	user = g2.got[len(g2.got)-1].Content
	if !strings.Contains(user, "[Q25191] Christopher Nolan: Inception - director - Christopher Nolan.") || !slices.Equal(ans.Citations, []string{"Q25191"}) {
		t.Errorf("the fact is not shown under its document, or its citation was lost: %v\n%s", ans.Citations, user)
	}
}

func TestEvidenceTokensZeroShowsHeads(t *testing.T) {
	g := &fakeGen{reply: "Nolan"}
	enc := &countEncoder{}
	_, err := New(Config{Generator: g, Encoder: enc}).Answer(context.Background(), "Who directed Inception?", nolanDocs, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if enc.calls != 0 {
		t.Errorf("evidence_tokens 0 encoded %d times", enc.calls)
	}
	if got, want := g.got, Messages("Who directed Inception?", []Source{
		{ID: "Q25188", Title: "Inception", Text: clipChars(nolanDocs[0].Text, 500)}, {ID: "Q25191", Title: "Christopher Nolan", Text: nolanDocs[1].Text},
		{ID: "Q1", Title: "Universe", Text: nolanDocs[2].Text}}); !slices.Equal(got, want) {
		t.Errorf("heads prompt:\n%v\nwant\n%v", got, want)
	}
}

// The instruction and example are the same bytes before every question and
// on both paths, so that the model server keeps their state cached.
func TestPromptPrefixIsStable(t *testing.T) {
	var prefixes [][]chat.Message
	for _, q := range []string{"Who directed Inception?", "Where was Nolan born?"} {
		heads := Messages(q, nolanDocs)
		g := &fakeGen{reply: "x"}
		if _, err := New(Config{Generator: g, Encoder: &countEncoder{}}).Answer(context.Background(), q, nolanDocs, Options{EvidenceTokens: 80}, nil); err != nil {
			t.Fatal(err)
		}
		prefixes = append(prefixes, heads[:len(heads)-1], g.got[:len(g.got)-1])
	}
	for _, p := range prefixes[1:] {
		if !slices.Equal(p, prefixes[0]) {
			t.Fatalf("the prefix changed:\n%v\n%v", p, prefixes[0])
		}
	}
	if len(prefixes[0]) != 3 || prefixes[0][0].Content != SystemPrompt {
		t.Errorf("prefix %v", prefixes[0])
	}
}

func TestGraphAnswer(t *testing.T) {
	g := &fakeGen{reply: "reader"}
	a := New(Config{Generator: g, Encoder: &countEncoder{}})
	ga := &GraphAnswer{Doc: "Q25191", Label: "Christopher Nolan", Path: "Inception -[director]-> Christopher Nolan", Relevance: 0.7, Confidence: 1, Agree: 1}
	DefaultGraphTrust.Trust(ga)
	if !ga.Trusted {
		t.Fatalf("a relevant path is not trusted: %+v", ga)
	}
	var streamed string
	ans, err := a.Answer(context.Background(), "Who directed Inception?", nolanDocs, Options{EvidenceTokens: 60, Graph: ga}, func(s string) error { streamed += s; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if ans.Source != SourceGraph || ans.Text != "Christopher Nolan [Q25191]" || !slices.Equal(ans.Citations, []string{"Q25191"}) || ans.Path != ga.Path || g.got != nil || streamed != ans.Text {
		t.Errorf("graph answer %+v, reader asked %v, streamed %q", ans, g.got != nil, streamed)
	}
	// Refused: below the relevance, no label, no document.
	for _, bad := range []GraphAnswer{
		{Doc: "Q25191", Label: "Christopher Nolan", Relevance: DefaultGraphTrust.MinRelevance - 0.01, Confidence: 1, Agree: 1},
		{Doc: "Q25191", Label: "  ", Relevance: 0.9, Confidence: 1, Agree: 1},
		{Label: "Christopher Nolan", Relevance: 0.9, Confidence: 1, Agree: 1},
	} {
		b := bad
		DefaultGraphTrust.Trust(&b)
		g := &fakeGen{reply: "Christopher Nolan [Q25188]"}
		ans, err := New(Config{Generator: g, Encoder: &countEncoder{}}).Answer(context.Background(), "Who directed Inception?", nolanDocs, Options{EvidenceTokens: 60, Graph: &b}, nil)
		if err != nil || b.Trusted || ans.Source != SourceReader || g.got == nil {
			t.Errorf("%+v: trusted %v, answer %+v (%v)", bad, b.Trusted, ans, err)
		}
	}
}
