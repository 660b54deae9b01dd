package pipeline

import (
	"testing"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// A question asks (a wh-word among its first three words, or a question
// mark); a claim or a lookup does not.
func TestIsQuestion(t *testing.T) {
	for q, want := range map[string]bool{
		"Which films did Christopher Nolan direct?":             true,
		"who got the first nobel prize in physics":              true,
		"Ezzard Charles was a world champion in which sport?":   true,
		"In 1990, who won the world cup":                        true,
		"what's the capital of france":                          true,
		"name a composer":                                       true,
		"Aristotle spent time in Athens.":                       false,
		"Magic Johnson did not play for the Lakers.":            false,
		"tell me about Christopher Nolan":                       false,
		"The film was directed by a man who was born in London": false,
	} {
		if got := isQuestion(q); got != want {
			t.Errorf("isQuestion(%q) = %v, want %v", q, got, want)
		}
	}
}

// agreement is the share of the channel's ten best among the search's
// twenty best.
func TestAgreement(t *testing.T) {
	hits := func(ids ...string) []retrieval.Hit {
		out := make([]retrieval.Hit, len(ids))
		for i, id := range ids {
			out[i] = retrieval.Hit{Doc: retrieval.Document{ID: id}}
		}
		return out
	}
	if a := agreement(hits("a", "b", "c", "d"), hits("b", "x", "d")); a != 0.5 {
		t.Errorf("agreement %v, want 0.5", a)
	}
	if a := agreement(nil, hits("b")); a != 0 {
		t.Errorf("no channel: agreement %v", a)
	}
	long := make([]string, 30)
	for i := range long {
		long[i] = string(rune('A' + i))
	}
	// only the search's first twenty count: the channel's "U" (21st) does not.
	if a := agreement(hits("U", "A"), hits(long...)); a != 0.5 {
		t.Errorf("agreement %v, want 0.5", a)
	}
}
