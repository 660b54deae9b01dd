package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// spanFeatures gives two features per text: its length and the bytes cut;
// a text holding "uncuttable" cannot be cut.
type spanFeatures struct{}

func (spanFeatures) ProjectionFeatures(_ context.Context, text string, cuts [][]scoring.Span) ([][]float32, error) {
	out := make([][]float32, len(cuts))
	for i, cut := range cuts {
		if len(cut) > 0 && strings.Contains(text, "uncuttable") {
			continue
		}
		n := 0
		for _, s := range cut {
			n += s.End - s.Start
		}
		out[i] = []float32{float32(len(text)), float32(n)}
	}
	return out, nil
}

// relprojExport runs RelProjectionFeatures over graphSource with seed and
// returns its rows and its log.
func relprojExport(t *testing.T, seed uint64) ([]projText, string, string) {
	t.Helper()
	qs := []Question{
		{ID: "q1", Question: "a was born where", Gold: []string{"B"}},
		{ID: "q2", Question: "fail"},
		{ID: "q3", Question: "a married who", Gold: []string{"D"}},
	}
	out := t.TempDir()
	corpus := filepath.Join(t.TempDir(), "corpus.jsonl")
	lines := `{"id": "d1", "title": "Memento", "text": "Memento is a film by Christopher Nolan. It was released in the year 2000! Tenet came much later on."}
{"id": "d2", "title": "Inception", "text": "Inception is another film of his, released in 2010. Short. The uncuttable sentence stays whole here."}
`
	if err := os.WriteFile(corpus, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	d := RelProjectionData{Questions: qs, Options: pipeline.Defaults(), CorpusFiles: []string{corpus}, Sentences: 3, Seed: seed}
	if err := RelProjectionFeatures(context.Background(), graphSource{memindex.New(memindex.DefaultParams())}, spanFeatures{}, wordEncoder{}, d, out, &stderr); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "texts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []projText
	for _, l := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var r projText
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	for _, f := range []string{"x.npy", "y.npy", "relvec.npy", "rels.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	rels, _ := os.ReadFile(filepath.Join(out, "rels.json"))
	return rows, stderr.String(), string(rels)
}

// The export gives each question a row as asked and one masked as the
// channel masks it, the gold one-hop steps on the masked one; each drawn
// sentence a row whole and one cut; a failed question is logged and
// skipped, and the draw follows the seed.
func TestRelProjectionFeatures(t *testing.T) {
	rows, log, rels := relprojExport(t, 1)
	if !strings.Contains(log, "skipped q2: link failed") || !strings.Contains(log, "1 questions skipped (failed)") {
		t.Errorf("the failed question is not logged and counted: %q", log)
	}
	var relList []graphRel
	if err := json.Unmarshal([]byte(rels), &relList); err != nil {
		t.Fatal(err)
	}
	step := func(pid string, back int) int {
		for i, r := range relList {
			if r.PID == pid {
				return 2*i + back
			}
		}
		t.Fatalf("%s not among the relations %v", pid, relList)
		return -1
	}
	want := []projText{
		{Text: "a was born where", Source: "question"},
		{Text: "was born where", Source: "question", Masked: true, Steps: []int{step("P19", 0)}},
		{Text: "a married who", Source: "question"},
		{Text: "married who", Source: "question", Masked: true, Steps: []int{step("P26", 1)}},
	}
	if len(rows) < len(want) {
		t.Fatalf("%d rows, want the questions' %d and the sentences'", len(rows), len(want))
	}
	for i, w := range want {
		if g := rows[i]; g.Text != w.Text || g.Masked != w.Masked || g.Source != w.Source || !slices.Equal(g.Steps, w.Steps) {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
	sentences := rows[len(want):]
	whole, cut := 0, 0
	for _, r := range sentences {
		if r.Source != "sentence" {
			t.Errorf("row %+v after the questions", r)
		}
		if r.Masked {
			cut++
		} else {
			whole++
		}
	}
	if whole != 3 || cut < 2 {
		t.Errorf("%d whole and %d cut sentence rows, want 3 whole and a cut one for each cuttable one", whole, cut)
	}
	again, _, _ := relprojExport(t, 1)
	other, _, _ := relprojExport(t, 2)
	if !sameTexts(again, rows) {
		t.Error("the same seed drew other rows")
	}
	if sameTexts(other, rows) {
		t.Error("another seed drew the same rows")
	}
}

func sameTexts(a, b []projText) bool {
	return slices.EqualFunc(a, b, func(x, y projText) bool { return x.Text == y.Text })
}
