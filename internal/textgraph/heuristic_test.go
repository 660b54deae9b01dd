package textgraph

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHeuristicPhrases(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"Journal of Mathematical Physics\nThe Journal of Mathematical Physics is published by the American Institute of Physics. It was first published in January 1960. The current editor is Jan Philip Solovej from University of Copenhagen.",
			[]string{"Journal of Mathematical Physics", "American Institute of Physics", "January 1960", "Jan Philip Solovej", "University of Copenhagen"}},
		{"In 2003, Apollo 11 and \"Hey Jude\" met J. R. R. Tolkien in the U.S. and Jay-Z.", []string{"Hey Jude", "2003", "Apollo 11", "J. R. R. Tolkien", "U.S.", "Jay-Z"}},
		{"Born on 12 May 2003 in Paris, France, she moved to the Lord of the Rings set.", []string{"12 May 2003", "Paris", "France", "Lord of the Rings"}},
	} {
		var got []string
		for _, p := range HeuristicPhrases(c.text).Phrases {
			got = append(got, p.Text)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("HeuristicPhrases(%q) (-want +got):\n%s", c.text, diff)
		}
	}
}

func TestSentences(t *testing.T) {
	text := "J. R. R. Tolkien wrote it. Then more!\nA line"
	var got []string
	for _, r := range sentences(text) {
		got = append(got, text[r[0]:r[1]])
	}
	want := []string{"J. R. R. Tolkien wrote it.", " Then more!", "A line"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sentences (-want +got):\n%s", diff)
	}
}

func TestKey(t *testing.T) {
	for in, want := range map[string]string{"The Prestige": "prestige", "U.S.A.": "u s a", "the": "", "A": "", "An Education": "education"} {
		if got := Key(in); got != want {
			t.Errorf("Key(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPythonNaNs(t *testing.T) {
	in := `{"a": NaN, "b": "NaN in a string \" NaN", "c": [-Infinity, Infinity, 1]}`
	want := `{"a": null, "b": "NaN in a string \" NaN", "c": [null, null, 1]}`
	if got := string(pythonNaNs([]byte(in))); got != want {
		t.Errorf("pythonNaNs = %s, want %s", got, want)
	}
}
