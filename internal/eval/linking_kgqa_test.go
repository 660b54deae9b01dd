package eval

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
)

// TestLinkingKGQA measures the linkers on the real kgqa questions against
// codexm (go test -run LinkingKGQA -v ./internal/eval/ prints the figures):
// the exact linker (the method's) and the context linker without the
// document-vector context, which needs an encoded index. The context
// linker's weights were tuned on train; dev is the check.
func TestLinkingKGQA(t *testing.T) {
	if testing.Short() {
		t.Skip("loads codexm")
	}
	root, err := datapath.Root()
	if err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	b, err := bundle.Read(ctx, filepath.Join(root, "codexm"))
	if err != nil {
		t.Skip(err)
	}
	g := memkg.FromBundle(b)
	for _, split := range []string{"train", "dev"} {
		ds, err := Open("kgqa:"+filepath.Join(root, "kgqa", split+".jsonl"), 0)
		if err != nil {
			t.Fatal(err)
		}
		var exact, confident, gold [][]string
		for _, q := range ds.Questions {
			ms, err := g.Link(ctx, q.Question)
			if err != nil {
				t.Fatal(err)
			}
			toks, spans, err := g.LinkCandidates(ctx, q.Question)
			if err != nil {
				t.Fatal(err)
			}
			cms := kg.ResolveConfident(q.Question, toks, spans, nil, kg.DefaultConfidenceParams())
			exact, confident, gold = append(exact, kg.QIDs(ms)), append(confident, kg.QIDs(cms)), append(gold, q.Topics)
		}
		e, c := ScoreLinking(exact, gold), ScoreLinking(confident, gold)
		for _, r := range []struct {
			name string
			s    LinkingScores
		}{{"exact", e}, {"context", c}} {
			t.Logf("%-5s %-7s P %.3f R %.3f F1 %.3f any-gold %.3f no-link %d (linked %d, gold %d, correct %d)",
				split, r.name, r.s.Precision, r.s.Recall, r.s.F1, r.s.AnyGold, r.s.NoLink, r.s.Linked, r.s.Gold, r.s.Correct)
		}
		if e.Questions != len(ds.Questions) {
			t.Errorf("%s: %d of %d questions have topics", split, e.Questions, len(ds.Questions))
		}
		if c.F1 <= e.F1 || c.Recall < e.Recall {
			t.Errorf("%s: the context linker (F1 %.3f, R %.3f) does not beat exact linking (F1 %.3f, R %.3f)", split, c.F1, c.Recall, e.F1, e.Recall)
		}
	}
}
