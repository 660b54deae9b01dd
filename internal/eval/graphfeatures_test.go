package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// graphSource links every question to A except "fail", and walks
// A -[P19]-> B -[P17]-> C, D -[P26]-> A; H is a hub neighbour of A whose
// neighbour E must not be reached through it.
type graphSource struct {
	x *memindex.Index
}

func (graphSource) LinkQuery(_ context.Context, q string, _ []float32, _ pipeline.Options) ([]kg.Mention, error) {
	if q == "fail" {
		return nil, errors.New("link failed")
	}
	return []kg.Mention{{QID: "A", Surface: "a", Confidence: 0.9}}, nil
}

func (graphSource) ChannelSubgraphs(_ context.Context, _ []string, _, _ int) (map[string]kg.Subgraph, error) {
	return map[string]kg.Subgraph{"A": {Root: "A",
		Nodes: []kg.Node{{QID: "A"}, {QID: "B", Hop: 1}, {QID: "D", Hop: 1}, {QID: "H", Hop: 1, Hub: true}, {QID: "C", Hop: 2}, {QID: "E", Hop: 2}},
		Edges: []kg.Edge{{From: "A", To: "B", PID: "P19", Label: "place of birth"}, {From: "B", To: "C", PID: "P17", Label: "country"},
			{From: "D", To: "A", PID: "P26", Label: "spouse"}, {From: "A", To: "H", PID: "P31", Label: "instance of"}, {From: "H", To: "E", PID: "P17", Label: "country"}}}}, nil
}

func (graphSource) Defaults() pipeline.Options { return pipeline.Defaults() }
func (s graphSource) Index() retrieval.Index   { return s.x }
func (graphSource) Encoder() scoring.Encoder   { return wordEncoder{} }

func TestGraphFeatures(t *testing.T) {
	x := memindex.New(memindex.DefaultParams())
	vs, _ := wordEncoder{}.Encode(context.Background(), []string{"nolan film", "memento"})
	if err := x.Put(context.Background(), []retrieval.Document{{ID: "B", Title: "B", Text: "nolan film", Vector: vs[0]}, {ID: "C", Title: "C", Text: "memento", Vector: vs[1]}}); err != nil {
		t.Fatal(err)
	}
	qs := []Question{{ID: "q1", Question: "nolan film", Gold: []string{"C"}}, {ID: "q2", Question: "fail"}, {ID: "q3", Question: "tenet", Gold: []string{"Z"}}}
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := GraphFeatures(context.Background(), graphSource{x}, qs, pipeline.Defaults(), 2, out, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "2 questions written, 1 skipped, 1 with a gold entity reached in 2 hop(s), 4 relations") {
		t.Errorf("summary %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "skipped q2: link failed") {
		t.Errorf("the failed question is not logged: %q", stderr.String())
	}
	raw, err := os.ReadFile(filepath.Join(out, "questions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var q graphFeatureQuestion
	if err := json.Unmarshal(bytes.Split(raw, []byte("\n"))[0], &q); err != nil {
		t.Fatal(err)
	}
	by := map[string]graphCandidate{}
	for _, c := range q.Cands {
		by[c.Entity] = c
	}
	if _, ok := by["E"]; ok {
		t.Error("E was reached through the hub H")
	}
	if b := by["B"]; len(b.P1) != 1 || b.P1[0][2] != 0 || !b.HasDoc || b.DocCos <= 0 {
		t.Errorf("B: %+v, want one forward one-hop path and its document", b)
	}
	if d := by["D"]; len(d.P1) != 1 || d.P1[0][2] != 1 || d.HasDoc {
		t.Errorf("D: %+v, want one backward one-hop path and no document", d)
	}
	if c := by["C"]; len(c.P1) != 0 || len(c.P2) != 1 || c.P2[0][2] != 0 || c.P2[0][4] != 0 || !c.HasDoc {
		t.Errorf("C: %+v, want one two-hop path through B", c)
	}
	if _, ok := by["A"]; ok || len(q.Roots) != 1 || q.Roots[0].Confidence != 0.9 {
		t.Errorf("roots %+v, candidates %v: the root is not a candidate", q.Roots, by)
	}
	for name, size := range map[string]int64{"qvec.npy": 2 * 6 * 4, "relvec.npy": 2 * 4 * 6 * 4} {
		st, err := os.Stat(filepath.Join(out, name))
		if err != nil || st.Size() < size {
			t.Errorf("%s: %v, %v (want at least %d bytes of data)", name, st, err, size)
		}
	}
}
