package bench

import (
	"os"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
)

// --questions takes a dmar eval dataset: its questions, and the corpus
// dmar eval searches for it unless --corpus names one; a question file and
// a dataset without a corpus of its own keep --corpus; per-question pools
// are refused with a message that names the dataset.
func TestLatencyQuestionsFromADataset(t *testing.T) {
	dir, err := datapath.Dataset("musique-100")
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	f := LatencyFlags{Questions: "musique:" + dir, Limit: 7, Cold: true}
	qs, corpus, err := f.ReadQuestions(state, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 7 || !strings.HasPrefix(corpus, state) || qs[0] == "" {
		t.Fatalf("%d questions, corpus %q", len(qs), corpus)
	}
	if fi, err := os.Stat(corpus); err != nil || fi.Size() == 0 {
		t.Fatalf("corpus %q: %v", corpus, err)
	}
	if _, c, err := f.ReadQuestions(state, "mine.jsonl"); err != nil || c != "mine.jsonl" {
		t.Fatalf("an explicit corpus: %q, %v", c, err)
	}
	kg, err := datapath.Dataset("kgqa")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"kgqa:" + kg + "/dev.jsonl", kg + "/dev.jsonl"} {
		f.Questions = spec
		qs, c, err := f.ReadQuestions(state, "")
		if err != nil || len(qs) != 7 || c != "" {
			t.Fatalf("%s: %d questions, corpus %q, %v", spec, len(qs), c, err)
		}
	}
	hp, err := datapath.Dataset("hotpotqa-100")
	if err != nil {
		t.Fatal(err)
	}
	f.Questions = "hotpotqa-distractor:" + hp
	if _, _, err := f.ReadQuestions(state, ""); err == nil || !strings.Contains(err.Error(), "hotpotqa-distractor") {
		t.Fatalf("per-question pools: %v", err)
	}
}
