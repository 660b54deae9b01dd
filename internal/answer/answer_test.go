package answer

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/chat"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/testfile"
)

// TestCiteCapturedReplies checks Cite on replies of the real 0.5B and 1.5B
// models (scripts/services/llm.sh) to questions over the demo data; some
// cite an id they were not shown, copied from an earlier prompt's example.
func TestCiteCapturedReplies(t *testing.T) {
	raw := testfile.Read(t, "testdata/replies.json")
	var rs []struct {
		Model, Question, Reply string
		Shown                  []string
		WantCitations          []string `json:"want_citations"`
		WantDropped            []string `json:"want_dropped"`
	}
	if err := json.Unmarshal(raw, &rs); err != nil {
		t.Fatal(err)
	}
	dropped := 0
	for _, r := range rs {
		text, cited, drop := Cite(r.Reply, r.Shown)
		if !slices.Equal(cited, r.WantCitations) || !slices.Equal(drop, r.WantDropped) {
			t.Errorf("%s on %q: Cite(%q) cited %v dropped %v; want %v and %v", r.Model, r.Question, r.Reply, cited, drop, r.WantCitations, r.WantDropped)
		}
		for _, d := range drop {
			dropped++
			if strings.Contains(text, d) {
				t.Errorf("%s on %q: the invented %s is still in %q", r.Model, r.Question, d, text)
			}
		}
		for _, c := range cited {
			if !slices.Contains(r.Shown, c) {
				t.Errorf("cited %s was not shown (%v)", c, r.Shown)
			}
		}
	}
	if len(rs) < 12 || dropped == 0 {
		t.Fatalf("%d replies, %d dropped citations: the fixture lost its cases", len(rs), dropped)
	}
}

func TestCite(t *testing.T) {
	ids := []string{"Q25188", "Q25191", "Inception (film)"}
	for _, c := range []struct {
		in, want       string
		cited, dropped []string
	}{
		{"Nolan [Q25191].", "Nolan [Q25191].", []string{"Q25191"}, nil},
		{"Nolan [Q25191, Q999] and Inception [2]", "Nolan [Q25191] and Inception [Q25191]", []string{"Q25191"}, []string{"Q999"}},
		{"It was [Q42]. Nolan [Source 1]", "It was. Nolan [Q25188]", []string{"Q25188"}, []string{"Q42"}},
		{"See [Inception (film)] [sic]", "See [Inception (film)] [sic]", []string{"Inception (film)"}, nil},
		{"Position out of range [7]", "Position out of range", nil, []string{"7"}},
	} {
		got, cited, dropped := Cite(c.in, ids)
		if got != c.want || !slices.Equal(cited, c.cited) || !slices.Equal(dropped, c.dropped) {
			t.Errorf("Cite(%q) = %q %v %v; want %q %v %v", c.in, got, cited, dropped, c.want, c.cited, c.dropped)
		}
	}
}

type fakeGen struct {
	reply string
	err   error
	got   []chat.Message
}

func (f *fakeGen) Complete(_ context.Context, msgs []chat.Message) (string, error) {
	f.got = msgs
	return f.reply, f.err
}

func (f *fakeGen) Stream(_ context.Context, msgs []chat.Message, onDelta func(string) error) (string, error) {
	f.got = msgs
	if f.err != nil {
		return "", f.err
	}
	for _, w := range strings.SplitAfter(f.reply, " ") {
		if err := onDelta(w); err != nil {
			return "", err
		}
	}
	return f.reply, nil
}

func TestAnswerShowsTopSourcesAndChecksCitations(t *testing.T) {
	g := &fakeGen{reply: "<think>two sources</think>Christopher Nolan [Q25191] [Q1]"}
	a := New(Config{Generator: g, Sources: 2, SourceChars: 20})
	docs := []Source{{ID: "Q25191", Title: "Christopher Nolan", Text: "Christopher Edward Nolan is a British-American filmmaker."}, {ID: "Q25188", Title: "Inception", Text: "Inception is a 2010 film."}, {ID: "Q1", Title: "Universe", Text: "not shown"}}
	var streamed strings.Builder
	ans, err := a.Answer(context.Background(), "Who directed Inception?", docs, Options{}, func(d string) error { streamed.WriteString(d); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if ans.Text != "Christopher Nolan [Q25191]" || !slices.Equal(ans.Citations, []string{"Q25191"}) || !slices.Equal(ans.Dropped, []string{"Q1"}) ||
		!slices.Equal(ans.Shown, []string{"Q25191", "Q25188"}) || streamed.String() != g.reply {
		t.Errorf("answer %+v, streamed %q", ans, streamed.String())
	}
	user := g.got[len(g.got)-1].Content
	if !strings.Contains(user, "[Q25191] Christopher Nolan: Christopher Edward ...") || strings.Contains(user, "Universe") || !strings.HasSuffix(user, "Question: Who directed Inception?\nAnswer:") {
		t.Errorf("prompt:\n%s", user)
	}
}

func TestAnswerUnavailable(t *testing.T) {
	docs := []Source{{ID: "Q1", Title: "a", Text: "b"}}
	_, err := New(Config{}).Answer(context.Background(), "q", docs, Options{}, nil)
	if errs.CodeOf(err) != errs.Unavailable || !errors.Is(err, ErrNoGenerator) || !strings.Contains(err.Error(), "--chat-url") {
		t.Errorf("no generator: %v", err)
	}
	_, err = New(Config{Generator: &fakeGen{err: errors.New("connection refused")}}).Answer(context.Background(), "q", docs, Options{}, nil)
	if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("generator down: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = New(Config{Generator: &fakeGen{err: context.Canceled}}).Answer(ctx, "q", docs, Options{}, nil)
	if !errors.Is(err, context.Canceled) || errs.CodeOf(err) == errs.Unavailable {
		t.Errorf("cancelled: %v", err)
	}
}
