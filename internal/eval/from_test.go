package eval

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

// An ablation is compared, paired, with the system it starts from: the
// paper-stage ablations with dmar-full, the question-aware ones with dmar;
// a run without the starting system has no such comparison.
func TestDiffsFromStartingSystem(t *testing.T) {
	systems, err := Systems([]string{"hybrid", "dmar", "dmar-full", "dmar-m1", "dmar-unmasked"}, pipeline.Defaults(), 5, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	from := map[string]string{}
	for _, s := range systems {
		from[s.Name] = s.From
	}
	if from["dmar-m1"] != "dmar-full" || from["dmar-unmasked"] != "dmar" || from["dmar"] != "" || from["hybrid"] != "" {
		t.Fatalf("from: %v", from)
	}
	ds := &Dataset{Format: "jsonl"}
	// recall@5 per question: dmar-full 1,1,0,0; dmar-m1 0,1,0,0 (-0.25);
	// dmar 1,1,1,0; dmar-unmasked 1,1,1,1 (+0.25).
	r5 := map[string][]float64{"hybrid": {0, 0, 0, 0}, "dmar-full": {1, 1, 0, 0}, "dmar-m1": {0, 1, 0, 0}, "dmar": {1, 1, 1, 0}, "dmar-unmasked": {1, 1, 1, 1}}
	lat := map[string]float64{"hybrid": 1, "dmar-full": 10, "dmar-m1": 7, "dmar": 4, "dmar-unmasked": 3}
	var recs []Record
	for i := 0; i < 4; i++ {
		id := fmt.Sprintf("q%d", i)
		ds.Questions = append(ds.Questions, Question{ID: id, Question: "?", Gold: []string{"g"}})
		for _, s := range systems {
			recs = append(recs, Record{ID: id, System: s.Name, Gold: []string{"g"}, Metrics: map[string]float64{"recall@5": r5[s.Name][i]}, LatencyMS: lat[s.Name]})
		}
	}
	sum := Summarize(ds, systems, recs, 5, 200, 1)
	if d := sum.DiffsFrom["dmar-m1"]["recall@5"]; d.Diff != -0.25 || d.N != 4 {
		t.Errorf("dmar-m1 against dmar-full: %+v, want -0.25 over 4", d)
	}
	if d := sum.DiffsFrom["dmar-unmasked"]["recall@5"]; d.Diff != 0.25 {
		t.Errorf("dmar-unmasked against dmar: %+v, want +0.25", d)
	}
	if _, ok := sum.DiffsFrom["dmar"]; ok {
		t.Error("dmar starts from nothing, but has a comparison")
	}
	var b bytes.Buffer
	writeDiffsFrom(&b, sum)
	if !strings.Contains(b.String(), "| dmar-m1 | dmar-full | -0.250 [") || !strings.Contains(b.String(), "| -3.0 |") {
		t.Errorf("report table:\n%s", b.String())
	}

	// Without dmar-full in the run, dmar-m1 has nothing to be compared with.
	var keep []System
	var krecs []Record
	for _, s := range systems {
		if s.Name != "dmar-full" {
			keep = append(keep, s)
		}
	}
	for _, r := range recs {
		if r.System != "dmar-full" {
			krecs = append(krecs, r)
		}
	}
	if _, ok := Summarize(ds, keep, krecs, 5, 200, 1).DiffsFrom["dmar-m1"]; ok {
		t.Error("dmar-m1 compared with a dmar-full that did not run")
	}
}
