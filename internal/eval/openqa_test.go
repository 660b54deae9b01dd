package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/datapath"
)

func TestOpenSharedOpenQA(t *testing.T) {
	dir := sharedRoot(t)
	nq, err := Open("nq-open:"+filepath.Join(dir, "nq-open", "dev.jsonl"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(nq.Questions) != 897 || nq.Questions[0].Question != "who got the first nobel prize in physics" ||
		!cmp.Equal(nq.Questions[0].Gold, []string{"nq:64aaafc597c5"}) || !cmp.Equal(nq.Questions[0].Answers, []string{"Wilhelm Conrad Röntgen"}) {
		t.Fatalf("nq-open: %d questions, first %+v", len(nq.Questions), nq.Questions[0])
	}
	if want := filepath.Join(dir, "nq-open", NQCorpusFile); !cmp.Equal(nq.ExtraCorpora, []string{want}) || nq.Corpus != nil {
		t.Errorf("nq-open pools %v (own corpus %d docs), want %s beside the configured corpus", nq.ExtraCorpora, len(nq.Corpus), want)
	}
	tq, err := Open("triviaqa:"+filepath.Join(dir, "triviaqa"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tq.Questions) != 641 || len(tq.Questions[0].AnswerQIDs) == 0 || len(tq.Questions[0].Answers) < 2 || tq.ExtraCorpora != nil {
		t.Fatalf("triviaqa: %d questions, first %+v", len(tq.Questions), tq.Questions[0])
	}
	fv, err := Open("fever:"+filepath.Join(dir, "fever", "dev.jsonl"), 0)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]int{}
	withGold := 0
	for _, q := range fv.Questions {
		labels[q.Label]++
		if len(q.Gold) > 0 {
			withGold++
			if q.Label == LabelNEI {
				t.Errorf("%s: a NOT ENOUGH INFO claim has gold %v", q.ID, q.Gold)
			}
		}
	}
	if len(fv.Questions) != 213 || withGold != 139 || labels[LabelSupports] != 63 || labels[LabelRefutes] != 76 || labels[LabelNEI] != 74 {
		t.Errorf("fever: %d claims, %d with gold, labels %v", len(fv.Questions), withGold, labels)
	}
	q := fv.Questions[0]
	if q.Question != "Aristotle spent time in Athens." || q.Label != LabelSupports || !cmp.Equal(q.Evidence, [][]Evidence{{{Doc: "Q868", Sentence: 2}}}) {
		t.Errorf("first claim %+v", q)
	}
	// A question without gold has no retrieval metrics (the means skip it).
	if m := Score([]string{"Q1"}, []string{"x"}, Question{ID: "c", Label: LabelNEI}, 5); len(m) != 0 {
		t.Errorf("NOT ENOUGH INFO claim scored %v", m)
	}
}

func TestOpenQABadRecords(t *testing.T) {
	for _, c := range []struct{ format, line, want string }{
		{"nq-open", `{"id":"a","question":"q"}`, "gold_doc_ids"},
		{"nq-open", `{"id":"","question":"q","gold_doc_ids":["x"]}`, "missing id"},
		{"triviaqa", `{"id":"a","question":"  ","gold_doc_ids":["x"]}`, "missing question"},
		{"fever", `{"id":"a","claim":"c","label":"MAYBE"}`, `got "MAYBE"`},
		{"fever", `{"id":"a","claim":"c","label":"SUPPORTS"}`, "needs gold_doc_ids"},
		{"fever", `{"id":"a","claim":"c","label":"REFUTES","gold_doc_ids":["Q1"],"evidence":[[["Q1",-1]]]}`, "sentence index"},
		{"fever", `{"id":"a","claim":"c","label":"REFUTES","gold_doc_ids":["Q1"]}` + "\n" + `{"id":"a","claim":"c","label":"REFUTES","gold_doc_ids":["Q1"]}`, "duplicate id"},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "dev.jsonl")
		if err := os.WriteFile(path, []byte(c.line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if c.format == "nq-open" {
			if err := os.WriteFile(filepath.Join(dir, NQCorpusFile), []byte(`{"id":"x","title":"t","text":"x"}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Open(c.format+":"+path, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "dev.jsonl:1") && !strings.Contains(err.Error(), "dev.jsonl:2") {
			t.Errorf("%s %s: error %v, want one naming the line and %q", c.format, c.line, err, c.want)
		}
	}
	// nq-open without its passages beside it says which file is missing.
	dir := t.TempDir()
	path := filepath.Join(dir, "dev.jsonl")
	if err := os.WriteFile(path, []byte(`{"id":"a","question":"q","gold_doc_ids":["x"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open("nq-open:"+path, 0); err == nil || !strings.Contains(err.Error(), NQCorpusFile) {
		t.Errorf("nq-open without corpus.jsonl: %v", err)
	}
}

func TestHalves(t *testing.T) {
	ds, err := Open("fever:"+filepath.Join(sharedRoot(t), "fever"), 0)
	if err != nil {
		t.Fatal(err)
	}
	all := len(ds.Questions)
	tune, report := *ds, *ds
	tune.Questions = append([]Question(nil), ds.Questions...)
	report.Questions = append([]Question(nil), ds.Questions...)
	if err := tune.KeepHalf(HalfTune); err != nil {
		t.Fatal(err)
	}
	if err := report.KeepHalf(HalfReport); err != nil {
		t.Fatal(err)
	}
	if len(tune.Questions)+len(report.Questions) != all || len(tune.Questions) < all/3 || len(report.Questions) < all/3 {
		t.Fatalf("halves %d + %d of %d", len(tune.Questions), len(report.Questions), all)
	}
	seen := map[string]bool{}
	for _, q := range tune.Questions {
		seen[q.ID] = true
	}
	for _, q := range report.Questions {
		if seen[q.ID] {
			t.Fatalf("%s is in both halves", q.ID)
		}
	}
	// The rule is the id's, not the file's order.
	if a, b := HalfOf("fever-64721"), HalfOf("fever-64721"); a != b || HalfOf("a") == HalfOf("b") && HalfOf("b") == HalfOf("c") && HalfOf("c") == HalfOf("d") && HalfOf("d") == HalfOf("e") {
		t.Errorf("HalfOf is not a split")
	}
	if err := ds.KeepHalf("train"); err == nil || !strings.Contains(err.Error(), `"train"`) {
		t.Errorf("bad half: %v", err)
	}
}

func sharedRoot(t *testing.T) string {
	t.Helper()
	root, err := datapath.Root()
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	return root
}
