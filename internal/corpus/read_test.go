package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFilesPoolsInOrder(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(a, `{"id":"Q1","title":"One","text":"first"}`+"\n"+`{"id":"Q2","title":"Two","text":"x"}`+"\n")
	write(b, `{"id":"nq:1","title":"P","text":"passage"}`+"\n"+`{"id":"Q1","title":"One again","text":"second"}`+"\n"+`{"title":"no id"}`+"\n")
	docs, st, err := ReadFiles(t.Context(), []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	if strings.Join(ids, ",") != "Q1,Q2,nq:1" || docs[0].Text != "first" {
		t.Errorf("pooled %v (Q1 text %q): the first file's document wins", ids, docs[0].Text)
	}
	if st.Read != 5 || st.Loaded != 3 || st.Duplicate != 1 || st.Bad != 1 || len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "b.jsonl:3") {
		t.Errorf("stats %+v", st)
	}
	if _, _, err := ReadFiles(t.Context(), []string{a, filepath.Join(dir, "missing.jsonl")}); err == nil || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("a missing file: %v", err)
	}
	if _, _, err := ReadFiles(t.Context(), nil); err == nil {
		t.Error("no file: no error")
	}
}
