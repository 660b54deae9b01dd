package eval

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// GateRanker writes one row per pool candidate with the ranker's inputs,
// the question index and the gold label; a failing question is skipped and
// a question without gold (a NOT ENOUGH INFO claim) is not run.
func TestGateRankerExport(t *testing.T) {
	x := scoring.RankInput{Semantic: 0.7, Reached: true, Graph: 0.5, Own: 0.9, Linked: 2, Question: true}
	src := fixedRows[pipeline.RankRow]{
		"q1":  {{ID: "D1", Input: x}, {ID: "D2"}},
		"q2":  {{ID: "D3", Input: scoring.RankInput{Semantic: -1}}},
		"nei": {{ID: "D4"}},
	}
	qs := []Question{{ID: "a", Question: "q1", Gold: []string{"D2"}}, {ID: "b", Question: "fail", Gold: []string{"D1"}},
		{ID: "n", Question: "nei", Label: LabelNEI}, {ID: "c", Question: "q2", Gold: []string{"D3", "D9"}}}
	out := exported(t, func(out string, stdout, stderr io.Writer) error {
		return GateRanker(context.Background(), src, qs, pipeline.Defaults(), out, stdout, stderr)
	})
	var feat []float32
	var rows, ngold []int32
	nf := len(scoring.RankFeatures)
	if h := readNpy(t, filepath.Join(out, "feat.npy"), &feat); !strings.Contains(h, "(3, 22)") || nf != 22 {
		t.Fatalf("feat header %q (%d features)", h, nf)
	}
	readNpy(t, filepath.Join(out, "rows.npy"), &rows)
	readNpy(t, filepath.Join(out, "ngold.npy"), &ngold)
	if !reflect.DeepEqual(feat[:nf], x.Vector()) || feat[2*nf] != -1 {
		t.Errorf("feature rows %v", feat)
	}
	// question index, label
	if want := []int32{0, 0, 0, 1, 1, 1}; !reflect.DeepEqual(rows, want) {
		t.Errorf("rows %v, want %v", rows, want)
	}
	if !reflect.DeepEqual(ngold, []int32{1, 2}) {
		t.Errorf("ngold %v", ngold)
	}
	for name, want := range map[string]any{"features.json": scoring.RankFeatures, "questions.json": []string{"a", "c"}} {
		raw, _ := os.ReadFile(filepath.Join(out, name))
		var got []string
		if err := json.Unmarshal(raw, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s: %v", name, raw, err)
		}
	}
	if err := GateRanker(context.Background(), src, qs[1:3], pipeline.Defaults(), t.TempDir(), io.Discard, io.Discard); err == nil {
		t.Error("no question run: no error")
	}
}

// optsSource records the options each question ran with.
type optsSource struct{ seen map[string]pipeline.Options }

func (s optsSource) RetrieveRanked(ctx context.Context, q string, o pipeline.Options) (*pipeline.Result, []pipeline.RankRow, error) {
	s.seen[q] = o
	return &pipeline.Result{}, []pipeline.RankRow{{ID: "p1"}, {ID: "p2"}}, ctx.Err()
}

// A question with its own pool (hotpotqa-distractor) is searched within it,
// with n cut to the pool as dmar eval cuts it; a pooled question keeps the
// options. The whole-corpus exports refuse per-question pools.
func TestGateRankerPerQuestionPools(t *testing.T) {
	src := optsSource{seen: map[string]pipeline.Options{}}
	qs := []Question{{ID: "a", Question: "own", Gold: []string{"p1"}, Pool: []string{"p1", "p2", "p3"}},
		{ID: "b", Question: "pooled", Gold: []string{"p2"}}}
	o := pipeline.Defaults().QuestionAware()
	if err := GateRanker(context.Background(), src, qs, o, t.TempDir(), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	own, pooled := src.seen["own"], src.seen["pooled"]
	if !reflect.DeepEqual(own.Filter.IDs, []string{"p1", "p2", "p3"}) || own.N != 3 {
		t.Errorf("per-question pool ran with filter %v and n %d, want its 3 ids and n 3", own.Filter.IDs, own.N)
	}
	if len(pooled.Filter.IDs) != 0 || pooled.N != o.N {
		t.Errorf("pooled question ran with filter %v and n %d", pooled.Filter.IDs, pooled.N)
	}
	if err := GateFeatures(context.Background(), nil, qs, t.TempDir(), io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "per-question") {
		t.Errorf("gate features over a per-question pool: %v", err)
	}
}
