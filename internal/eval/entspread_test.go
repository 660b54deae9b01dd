package eval

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestSummarizeEntSpread(t *testing.T) {
	systems := []System{{Name: "dense", Kind: "dense"}, {Name: "dmar", Kind: "dmar"}}
	recs := []Record{
		{ID: "q1", System: "dense"},
		// Two questions spread ent, one ties every candidate, one ran without
		// the structural path (no spread recorded).
		{ID: "q1", System: "dmar", EntStd: map[string]float64{"first": 0.2, "first_nonzero": 0.1, "first_distinct": 0.5, "second": 0.3}},
		{ID: "q2", System: "dmar", EntStd: map[string]float64{"first": 0.4, "first_nonzero": 0.3, "first_distinct": 1, "second": 0}},
		{ID: "q3", System: "dmar", EntStd: map[string]float64{"first": 0, "second": 0}},
		{ID: "q4", System: "dmar"},
	}
	got := summarizeEntSpread(systems, recs)
	if _, ok := got["dense"]; ok {
		t.Errorf("a baseline got a spread: %+v", got["dense"])
	}
	first, second := got["dmar"]["first"], got["dmar"]["second"]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	if first.Questions != 3 || first.Off != 1 || !near(first.MeanStd, 0.2) || !near(first.ZeroShare, 1.0/3) ||
		!near(first.MeanStdNonzero, 0.2) || !near(first.MeanDistinct, 0.75) {
		t.Errorf("first: %+v", first)
	}
	if second.Questions != 3 || !near(second.MeanStd, 0.1) || !near(second.ZeroShare, 2.0/3) || second.MeanDistinct != 0 {
		t.Errorf("second: %+v", second)
	}

	var b bytes.Buffer
	writeEntSpread(&b, &Summary{Systems: systems, EntSpread: got})
	for _, want := range []string{"## Spread of the structural score ent", "| dmar | first | 3 | 1 | 0.200 | 0.333 | 0.200 | 0.750 |", "| dmar | second | 3 | 1 | 0.100 | 0.667 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	if len(summarizeEntSpread(systems[:1], recs[:1])) != 0 {
		t.Error("a run without DMAR systems got a spread section")
	}
}
