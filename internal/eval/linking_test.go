package eval

import (
	"math"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

func TestScoreLinking(t *testing.T) {
	linked := [][]string{{"Q1", "Q2"}, {}, {"Q3", "Q3"}, {"Q9"}}
	gold := [][]string{{"Q1"}, {"Q5"}, {"Q3", "Q4"}, nil}
	s := ScoreLinking(linked, gold)
	// Q9's question has no gold: skipped. Linked {Q1,Q2},{},{Q3}: 3; gold 1+1+2 = 4; correct 2.
	if s.Questions != 3 || s.Linked != 3 || s.Gold != 4 || s.Correct != 2 || s.NoLink != 1 {
		t.Fatalf("counts %+v", s)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(s.Precision, 2.0/3) || !near(s.Recall, 0.5) || !near(s.F1, 2*(2.0/3)*0.5/(2.0/3+0.5)) || !near(s.AnyGold, 2.0/3) {
		t.Fatalf("scores %+v", s)
	}
	if z := ScoreLinking(nil, nil); z != (LinkingScores{}) {
		t.Fatalf("empty %+v", z)
	}
}

func TestSummarizeLinking(t *testing.T) {
	ds := &Dataset{Questions: []Question{{ID: "a", Topics: []string{"Q1"}}, {ID: "b", Topics: []string{"Q2"}}}}
	on, off := pipeline.Defaults(), pipeline.Defaults()
	off.Structure = "off"
	sys := []System{{Name: "bm25", Kind: "bm25"}, {Name: "dmar", Kind: "dmar", Options: &on}, {Name: "dmar-no-kg", Kind: "dmar", Options: &off}}
	recs := []Record{
		{ID: "a", System: "dmar", QueryEntities: []string{`Q1 "x"`, `Q7 "y"`}},
		{ID: "b", System: "dmar"},
		{ID: "a", System: "dmar-no-kg"}, {ID: "b", System: "dmar-no-kg"},
	}
	got := summarizeLinking(ds, sys, recs)
	// With the structural path off a system still links (its records hold
	// no entities here): it is scored too.
	if len(got) != 2 || got["dmar"].Correct != 1 || got["dmar"].Linked != 2 || got["dmar"].NoLink != 1 || got["dmar-no-kg"].NoLink != 2 {
		t.Fatalf("got %+v", got)
	}
	if summarizeLinking(&Dataset{Questions: []Question{{ID: "a"}}}, sys, recs) != nil {
		t.Fatal("a dataset without topics has no linking scores")
	}
	var b strings.Builder
	writeLinking(&b, &Summary{Systems: sys, Linking: got})
	if !strings.Contains(b.String(), "| dmar | exact | 2 | 0.500 | 0.500 | 0.500 | 0.500 | 1 |") {
		t.Fatalf("report:\n%s", b.String())
	}
}
