package pipeline

import (
	"reflect"
	"testing"
)

// anchorNames are the anchor's first n names (textgraph's heuristic) that
// Q does not say, in text order.
func TestAnchorNames(t *testing.T) {
	q := "Who was the first president of the association which published Journal of Psychotherapy Integration?"
	text := "Journal of Psychotherapy Integration is a quarterly journal published by the American Psychological Association on behalf of the Society for the Exploration of Psychotherapy Integration. It was established in 1991."
	for n, want := range map[int][]string{
		0: nil,
		1: {"American Psychological Association"},
		2: {"American Psychological Association", "Society for the Exploration of Psychotherapy Integration"},
		9: {"American Psychological Association", "Society for the Exploration of Psychotherapy Integration", "1991"},
	} {
		if got := anchorNames(q, text, n); !reflect.DeepEqual(got, want) {
			t.Errorf("n=%d: %q, want %q", n, got, want)
		}
	}
}
