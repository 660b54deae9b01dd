package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/datapath"
)

// openSetting opens the dataset spec (limit as Open's) and
// fails unless it is in setting with questions questions.
func openSetting(t *testing.T, spec string, limit int, setting string, questions int) *Dataset {
	t.Helper()
	ds, err := Open(spec, limit)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Setting != setting || len(ds.Questions) != questions {
		t.Fatalf("setting %q, %d questions", ds.Setting, len(ds.Questions))
	}
	return ds
}

func TestOpenHotpotPooled(t *testing.T) {
	ds := openSetting(t, "hotpotqa:testdata/hotpot", 0, "pooled", 2)
	var ids []string
	for _, d := range ds.Corpus {
		ids = append(ids, d.ID)
	}
	if diff := cmp.Diff([]string{"Following", "Inception", "Memento", "Tenet"}, ids); diff != "" {
		t.Errorf("pooled corpus (-want +got):\n%s", diff)
	}
	if ds.Corpus[1].Text != "Inception is a film by Christopher Nolan." {
		t.Errorf("sentences joined as %q", ds.Corpus[1].Text)
	}
	q := ds.Questions[0]
	if diff := cmp.Diff([]string{"Inception", "Following"}, q.Gold); diff != "" {
		t.Errorf("gold = supporting titles once each (-want +got):\n%s", diff)
	}
	if q.Pool != nil || q.Strata["type"] != "bridge" || ds.Questions[1].Strata["type"] != "comparison" {
		t.Errorf("pool %v, strata %v / %v", q.Pool, q.Strata, ds.Questions[1].Strata)
	}
}

func TestOpenHotpotDistractor(t *testing.T) {
	ds := openSetting(t, "hotpotqa-distractor:testdata/hotpot/questions.json", 1, "per-question", 1)
	if diff := cmp.Diff([]string{"Inception", "Following", "Memento"}, ds.Questions[0].Pool); diff != "" {
		t.Errorf("pool = the question's own paragraphs (-want +got):\n%s", diff)
	}
	// Without corpus.json the index holds the context paragraphs only.
	if len(ds.Corpus) != 3 {
		t.Errorf("corpus has %d documents, want the 3 context paragraphs", len(ds.Corpus))
	}
}

func TestOpenMusiqueSharedTitles(t *testing.T) {
	ds, err := Open("musique:testdata/musique", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Corpus) != 4 {
		t.Fatalf("corpus has %d documents, want 4", len(ds.Corpus))
	}
	ids := map[string]bool{}
	for _, d := range ds.Corpus {
		ids[d.ID] = true
	}
	q := ds.Questions[0]
	if len(q.Gold) != 2 || q.Gold[0] != "X" || !strings.HasPrefix(q.Gold[1], "P #") {
		t.Fatalf("gold %v: want X and a hashed P id", q.Gold)
	}
	for _, g := range q.Gold {
		if !ids[g] {
			t.Errorf("gold %q is not a corpus id", g)
		}
	}
	if q.Gold[1] == MusiqueDocID("P", "P is also a letter.", true) {
		t.Error("two paragraphs titled P got the same id")
	}
	if q.Strata["hops"] != "3-hop" || len(q.Answers) != 2 {
		t.Errorf("strata %v, answers %v", q.Strata, q.Answers)
	}
}

func TestOpenKGQAAndPlain(t *testing.T) {
	ds, err := Open("kgqa:testdata/kgqa.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Questions) != 2 || ds.Corpus != nil {
		t.Fatalf("%d questions, corpus %v", len(ds.Questions), ds.Corpus != nil)
	}
	q := ds.Questions[0]
	if diff := cmp.Diff([]string{"Christopher Nolan", "Nolan", "Chris Nolan"}, q.Answers); diff != "" {
		t.Errorf("answers = labels then aliases (-want +got):\n%s", diff)
	}
	want := map[string]string{"connection": "1-hop", "answer_hub": "not_hub", "source": "qald10"}
	if diff := cmp.Diff(want, q.Strata); diff != "" {
		t.Errorf("strata (-want +got):\n%s", diff)
	}
	if ds.Questions[1].Strata["answer_hub"] != "hub" {
		t.Errorf("hub stratum: %v", ds.Questions[1].Strata)
	}
	p, err := Open("jsonl:testdata/plain.jsonl", 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Questions[1].Label != "SUPPORTS" || p.Questions[1].Strata["kind"] != "claim" {
		t.Errorf("plain record 2: %+v", p.Questions[1])
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"id":"a","question":"q","gold_doc_ids":["x"]}`+"\n"+`{"id":"b","question":"q","gold":["x"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dup := filepath.Join(dir, "dup.jsonl")
	if err := os.WriteFile(dup, []byte(`{"id":"a","question":"q","gold_doc_ids":["x"]}`+"\n"+`{"id":"a","question":"r","gold_doc_ids":["x"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for spec, want := range map[string]string{
		"nocolon":      "FORMAT:PATH",
		"trec:x":       "unknown format",
		"jsonl:" + bad: "bad.jsonl:2",
		"jsonl:" + dup: "duplicate id",
		"kgqa:" + filepath.Join(dir, "none.jsonl"): "no such file",
	} {
		_, err := Open(spec, 0)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%q) = %v, want an error containing %q", spec, err, want)
		}
	}
}

// The shared benchmarks read as the data README describes them.
func TestOpenSharedBenchmarks(t *testing.T) {
	root, err := datapath.Root()
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	for _, c := range []struct {
		spec            string
		questions, docs int
	}{
		{"hotpotqa:" + filepath.Join(root, "hotpotqa-100"), 100, 994},
		{"hotpotqa-distractor:" + filepath.Join(root, "hotpotqa-100"), 100, 994},
		{"musique:" + filepath.Join(root, "musique-100"), 100, 1890},
		{"kgqa:" + filepath.Join(root, "kgqa", "dev.jsonl"), 207, 0},
	} {
		ds, err := Open(c.spec, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds.Questions) != c.questions || len(ds.Corpus) != c.docs {
			t.Errorf("%s: %d questions, %d documents; want %d, %d", c.spec, len(ds.Questions), len(ds.Corpus), c.questions, c.docs)
		}
		ids := map[string]bool{}
		for _, d := range ds.Corpus {
			ids[d.ID] = true
		}
		for _, q := range ds.Questions {
			for _, g := range q.Gold {
				if c.docs > 0 && !ids[g] {
					t.Errorf("%s: question %s: gold %q is not in the corpus", c.spec, q.ID, g)
				}
			}
			for _, p := range q.Pool {
				if !ids[p] {
					t.Errorf("%s: question %s: pool %q is not in the corpus", c.spec, q.ID, p)
				}
			}
		}
	}
}
