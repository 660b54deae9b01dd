package reformulate

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/testfile"
)

// capturedReply is one reply of a real model to the reformulation prompt,
// captured from scripts/services/llm.sh's server (testdata/replies.json):
// what Clean must return (want) or why it must refuse it (refused).
type capturedReply struct {
	Model    string   `json:"model"`
	Messages string   `json:"messages"`
	Query    string   `json:"query"`
	Evidence []string `json:"evidence"`
	Reply    string   `json:"reply"`
	Want     string   `json:"want"`
	Refused  string   `json:"refused"`
}

func inputFor(query string, evidence ...string) Input {
	in := Input{Query: query}
	for _, e := range evidence {
		in.Anchors = append(in.Anchors, Evidence{Snippet: e})
	}
	return in
}

func TestCleanCapturedReplies(t *testing.T) {
	raw := testfile.Read(t, "testdata/replies.json")
	var rs []capturedReply
	if err := json.Unmarshal(raw, &rs); err != nil {
		t.Fatal(err)
	}
	refused := 0
	for _, r := range rs {
		got, err := Clean(r.Reply, inputFor(r.Query, r.Evidence...))
		if r.Refused != "" {
			refused++
			if !errors.Is(err, ErrNotAQuery) || !strings.Contains(err.Error(), r.Refused) {
				t.Errorf("%s on %q: Clean(%q) = %q, %v; want refused: %s", r.Model, r.Query, r.Reply, got, err, r.Refused)
			}
			continue
		}
		if err != nil || got != r.Want {
			t.Errorf("%s on %q: Clean(%q) = %q, %v; want %q", r.Model, r.Query, r.Reply, got, err, r.Want)
		}
	}
	if len(rs) < 20 || refused == 0 {
		t.Fatalf("%d captured replies, %d refused: the fixture lost its cases", len(rs), refused)
	}
}

// The decorations below are what other models (reasoning models, chattier
// instruct models) add; the captured Qwen2.5-Coder replies have none of them.
func TestCleanDecorations(t *testing.T) {
	in := inputFor("Where was the director of The Prestige born?", "The Prestige is a 2006 mystery thriller film directed by Christopher Nolan, from a screenplay he co-wrote with his brother Jonathan.")
	want := "Christopher Nolan director of The Prestige place of birth"
	for _, reply := range []string{
		"<think>The director is Nolan, so search for his birthplace.</think>\n" + want,
		`"` + want + `"`,
		"“" + want + "”",
		"Reformulated query: " + want,
		"**Search query:** " + want,
		"Reformulate: `" + want + "`",
		"[Original Query: Where was the director of The Prestige born?]\n[Evidence 1: The Prestige ...]\n" + want,
		"\n\n- " + want + "\n\nThis query names the director.",
	} {
		got, err := Clean(reply, in)
		if err != nil || got != want {
			t.Errorf("Clean(%q) = %q, %v; want %q", reply, got, err, want)
		}
	}
}

func TestCleanRefuses(t *testing.T) {
	in := inputFor("Where was the director of The Prestige born?", "The Prestige is a 2006 mystery thriller film directed by Christopher Nolan, from a screenplay he co-wrote with his brother Jonathan.")
	for _, c := range []struct{ reply, why string }{
		{"", "nothing left"},
		{"<think>still thinking about the director", "nothing left"},
		{"Answer: London", "is an answer"},
		{"London", "shares no word"},
		{"The Prestige is a 2006 mystery thriller film directed by Christopher Nolan, from a screenplay", "copies evidence 1"},
		{strings.Repeat("Prestige director birthplace ", 21), "more than 60"},
	} {
		got, err := Clean(c.reply, in)
		if !errors.Is(err, ErrNotAQuery) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("Clean(%q) = %q, %v; want refused: %s", c.reply, got, err, c.why)
		}
	}
}
