package reformulate

import (
	"context"
	"testing"
)

// The built-in reformulator adds the anchors' titles, then the bridges, the
// relations and the anchors' names, each once and only where Q does not
// already say it.
func TestBuiltinAddsNamesLast(t *testing.T) {
	in := Input{
		Query:     "Who was the first president of the association that publishes Journal of Psychotherapy Integration?",
		Anchors:   []Evidence{{Title: "Journal of Psychotherapy Integration"}},
		Relations: []Term{{Text: "publisher"}},
		Names:     []string{"American Psychological Association", "journal of psychotherapy integration", "American Psychological Association", "Society for the Exploration of Psychotherapy Integration"},
	}
	got, err := Builtin{}.Reformulate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	want := in.Query + " publisher American Psychological Association Society for the Exploration of Psychotherapy Integration"
	if got != want {
		t.Errorf("Q' = %q\nwant %q", got, want)
	}
}
