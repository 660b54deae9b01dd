package verify

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/chat"
	"github.com/dmar-kg/dmar/internal/errs"
)

func TestSentencesCountAsTheData(t *testing.T) {
	// The fever data's rule: split after ". ", "! ", "? " only.
	got := Sentences(`Earvin "Magic" Johnson Jr. (born 1959) is a player. Really?  Yes! End.` + "\nNext")
	want := []string{`Earvin "Magic" Johnson Jr.`, "(born 1959) is a player.", "Really?", " Yes!", "End.\nNext"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Sentences = %q, want %q", got, want)
	}
	if got := Sentences(""); len(got) != 1 || got[0] != "" {
		t.Errorf("Sentences(\"\") = %q", got)
	}
}

func TestSelectKeepsTheLeadAndTheClaimsSentences(t *testing.T) {
	doc := Source{ID: "Q1", Title: "Aristotle", Text: "Aristotle was a Greek philosopher. He wrote on physics. " +
		"He taught Alexander. At seventeen he joined Plato's Academy in Athens. He died in Chalcis."}
	got := Select("Aristotle lived in Athens.", []Source{doc, {ID: "Q2", Title: "Empty", Text: "  "}}, 105)
	var idx []int
	for i, s := range got {
		if s.Number != i+1 || s.Doc != "Q1" {
			t.Errorf("sentence %d: %+v", i, s)
		}
		idx = append(idx, s.Index)
	}
	// The lead (0), the Athens sentence (3) first among the others, then what fits, in document order.
	if !reflect.DeepEqual(idx, []int{0, 1, 3}) {
		t.Errorf("picked sentences %v, want [0 1 3]", idx)
	}
	if got[2].Text != "At seventeen he joined Plato's Academy in Athens." {
		t.Errorf("quote %q", got[2].Text)
	}
}

// fake is a generator with a fixed reply; it records what it was asked.
type fake struct {
	reply  string
	err    error
	msgs   []chat.Message
	schema chat.Schema
}

func (f *fake) CompleteSchema(_ context.Context, msgs []chat.Message, s chat.Schema) (string, error) {
	f.msgs, f.schema = msgs, s
	return f.reply, f.err
}

var docs = []Source{
	{ID: "Q25188", Title: "Inception", Text: "Inception is a 2010 science fiction film. It was written and directed by Christopher Nolan."},
	{ID: "Q25191", Title: "Christopher Nolan", Text: "Christopher Nolan is a British-American film director."},
}

func TestVerifyRules(t *testing.T) {
	for _, c := range []struct {
		name, reply string
		verdict     Verdict
		model       Verdict
		evidence    []string // doc:index
		dropped     []int
		note        string
	}{
		{"supported", `{"evidence": [2], "verdict": "SUPPORTS"}`, Supports, Supports, []string{"Q25188:1"}, nil, ""},
		{"invented numbers dropped", `{"evidence": [9, 0, 3, 3], "verdict": "REFUTES"}`, Refutes, Refutes, []string{"Q25191:0"}, []int{9, 0}, ""},
		{"no valid evidence", `{"evidence": [7], "verdict": "SUPPORTS"}`, NotEnoughInfo, Supports, nil, []int{7}, "cited no sentence"},
		{"no evidence", `{"evidence": [], "verdict": "REFUTES"}`, NotEnoughInfo, Refutes, nil, nil, "cited no sentence"},
		{"not enough info rests on nothing", `{"evidence": [1], "verdict": "NOT_ENOUGH_INFO"}`, NotEnoughInfo, NotEnoughInfo, nil, nil, "not evidence"},
		{"free text", `SUPPORTS, see [2]`, NotEnoughInfo, "", nil, nil, "not a verdict"},
		{"unknown verdict", `{"evidence": [1], "verdict": "TRUE"}`, NotEnoughInfo, "", nil, nil, "not a verdict"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &fake{reply: c.reply}
			res, err := New(Config{Generator: g}).Verify(context.Background(), "Nolan directed Inception.", docs)
			if err != nil {
				t.Fatal(err)
			}
			var ev []string
			for _, s := range res.Evidence {
				ev = append(ev, s.Doc+":"+string(rune('0'+s.Index)))
				// Every quote is a sentence of its document.
				if !strings.Contains(docText(s.Doc), s.Text) || Sentences(docText(s.Doc))[s.Index] != s.Text {
					t.Errorf("quote %q is not sentence %d of %s", s.Text, s.Index, s.Doc)
				}
			}
			if res.Verdict != c.verdict || res.ModelVerdict != c.model || !reflect.DeepEqual(ev, c.evidence) ||
				!reflect.DeepEqual(res.Dropped, c.dropped) || !strings.Contains(res.Note, c.note) || (c.note == "") != (res.Note == "") {
				t.Errorf("got %+v", res)
			}
			if !reflect.DeepEqual(res.Sources, []string{"Q25188", "Q25191"}) || len(res.Shown) != 3 || res.Reply != c.reply {
				t.Errorf("sources %v, shown %d, reply %q", res.Sources, len(res.Shown), res.Reply)
			}
		})
	}
}

func docText(id string) string {
	for _, d := range docs {
		if d.ID == id {
			return d.Text
		}
	}
	return ""
}

func TestVerifyAsksWithTheSchemaAndNumberedSentences(t *testing.T) {
	g := &fake{reply: `{"evidence": [], "verdict": "NOT_ENOUGH_INFO"}`}
	if _, err := New(Config{Generator: g, MaxEvidence: 2}).Verify(context.Background(), " Nolan directed Inception. ", docs); err != nil {
		t.Fatal(err)
	}
	last := g.msgs[len(g.msgs)-1].Content
	want := "Document Q25188 (Inception):\n[1] Inception is a 2010 science fiction film.\n[2] It was written and directed by Christopher Nolan.\n\n" +
		"Document Q25191 (Christopher Nolan):\n[3] Christopher Nolan is a British-American film director.\n\nClaim: Nolan directed Inception."
	if last != want {
		t.Errorf("prompt:\n%s\nwant:\n%s", last, want)
	}
	var s struct {
		Properties struct {
			Evidence struct {
				MaxItems int `json:"maxItems"`
				Items    struct{ Minimum, Maximum int }
			}
			Verdict struct{ Enum []string }
		}
		Required []string
	}
	if err := json.Unmarshal(g.schema.Schema, &s); err != nil {
		t.Fatal(err)
	}
	ev := s.Properties.Evidence
	if ev.MaxItems != 2 || ev.Items.Minimum != 1 || ev.Items.Maximum != 3 ||
		!reflect.DeepEqual(s.Properties.Verdict.Enum, []string{"SUPPORTS", "REFUTES", "NOT_ENOUGH_INFO"}) || len(s.Required) != 2 {
		t.Errorf("schema %s", g.schema.Schema)
	}
	// The examples teach the format: each reply is valid under the rules.
	for _, m := range g.msgs {
		if m.Role == "assistant" {
			var r struct{ Verdict string }
			if json.Unmarshal([]byte(m.Content), &r) != nil || !known(Verdict(r.Verdict)) {
				t.Errorf("example reply %q", m.Content)
			}
		}
	}
}

func TestVerifyWithoutGeneratorOrSentences(t *testing.T) {
	var nilV *Verifier
	for _, v := range []*Verifier{nilV, New(Config{})} {
		_, err := v.Verify(context.Background(), "x", docs)
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != errs.Unavailable || !errors.Is(err, ErrNoGenerator) {
			t.Errorf("no generator: %v", err)
		}
	}
	g := &fake{}
	res, err := New(Config{Generator: g}).Verify(context.Background(), "x", nil)
	if err != nil || res.Verdict != NotEnoughInfo || g.msgs != nil || res.Note == "" {
		t.Errorf("no documents: %+v, %v, asked %v", res, err, g.msgs != nil)
	}
	g = &fake{err: errors.New("connection refused")}
	_, err = New(Config{Generator: g}).Verify(context.Background(), "x", docs)
	var e *errs.Error
	if !errors.As(err, &e) || e.Code != errs.Unavailable || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("generator down: %v", err)
	}
}
