package bench

import (
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/eval"
)

// TestTraceLoss: the trace counts the gold documents that left the top 5,
// where they went, and what took their places.
func TestTraceLoss(t *testing.T) {
	first := []eval.Record{
		{ID: "q1", Gold: []string{"Q1", "Q2"}, RankedIDs: []string{"Q1", "Q2", "Q9", "Q8", "Q7"}},
		{ID: "q2", Gold: []string{"Q5"}, RankedIDs: []string{"Q6", "Q5", "Q4", "Q3", "Q2"}, ResultStages: []string{"first", "first+kg", "first", "first", "first"}},
		{ID: "q3", Gold: []string{"Q4"}, RankedIDs: []string{"Q1", "Q2", "Q3", "Q7", "Q8", "Q4"}},
	}
	cur := []eval.Record{
		// Q1 stays, Q2 goes to rank 7 behind a copy of itself (reached by
		// the graph channel) and a copy of Q9.
		{ID: "q1", Gold: []string{"Q1", "Q2"},
			RankedIDs:    []string{"synthetic:1:5", "Q1", "synthetic:1:6", "Q9", "Q8", "Q7", "Q2"},
			ResultStages: []string{"first+kg", "first+kg", "first", "first", "first", "first", "first"}},
		// Q5 leaves the top 20 altogether.
		{ID: "q2", Gold: []string{"Q5"}, RankedIDs: []string{"Q6", "Q4", "Q3", "Q2", "Q1"}},
		// Q4 comes in.
		{ID: "q3", Gold: []string{"Q4"}, RankedIDs: []string{"Q4", "Q1", "Q2", "Q3", "Q7"}},
	}
	titles := map[string]string{"Q1": "One", "Q2": "Two", "Q9": "Nine", "synthetic:1:5": "Two (synthetic)", "synthetic:1:6": "Nine (synthetic)"}
	small := ScaleRow{Size: 100, records: first, searched: map[string]bool{"q1\x00Q2": true, "q2\x00Q5": true}}
	large := ScaleRow{Size: 1000, records: cur, titles: titles, searched: map[string]bool{"q1\x00Q2": true}}
	got := TraceLoss(small, large)
	for _, want := range []string{
		"3 gold documents in the top 5 at 100, 2 of them out of it at 1000 (in 2 questions; 1 of them reached by the graph channel at 100) and 1 others in",
		"1 still in the top 20 (median rank 7), 1 not (1 of these no longer found by the stage-1 search); the stage-1 search found 2 of the 2 at 100 and finds 1 at 1000",
		"9 documents that are not gold: 2 synthetic (1 copies of the question's own gold, by base title), 7 real; 1 of them reached by the graph channel",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("trace %q\nlacks %q", got, want)
		}
	}
}
