package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/npy"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// RankSource runs DMAR and reports its final pool's ranker inputs
// (pipeline.Pipeline satisfies it).
type RankSource interface {
	RetrieveRanked(ctx context.Context, query string, opts pipeline.Options) (*pipeline.Result, []pipeline.RankRow, error)
}

// GateRanker runs the full pipeline with opts for every question of a
// labelled dataset and writes the learned ranker's training data under out:
// every candidate of the final pool,
//
//	feat.npy        [R,F] float32  scoring.RankInput.Vector (features.json names the columns)
//	rows.npy        [R,2] int32    question index, label (1 = gold document)
//	ngold.npy       [Q]   int32    gold documents of the question
//	features.json                the column names
//	questions.json               the question ids, in index order
//
// A question with its own pool (hotpotqa-distractor) is searched within it,
// as dmar eval searches it. Questions without gold (FEVER's NOT ENOUGH INFO
// claims) are not exported;
// questions whose run fails are counted, logged on stderr and skipped.
func GateRanker(ctx context.Context, p RankSource, qs []Question, opts pipeline.Options, out string, stdout, stderr io.Writer) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	nf := len(scoring.RankFeatures)
	var feat []float32
	var rows []int32
	var ids []string
	// Questions without gold (FEVER's NOT ENOUGH INFO claims) have no row to label.
	hasGold := func(q Question) bool { return len(q.Gold) > 0 }
	ngold, skipped, err := exportQuestions(ctx, "gate ranker", qs, stderr, hasGold,
		func(q Question) ([]pipeline.RankRow, error) {
			_, rr, err := p.RetrieveRanked(ctx, q.Question, pooled(opts, q.Pool))
			if err == nil {
				ids = append(ids, q.ID)
			}
			return rr, err
		},
		func(qi int32, gold map[string]bool, rr []pipeline.RankRow) {
			for _, r := range rr {
				feat = append(feat, r.Input.Vector()...)
				rows = append(rows, qi, goldLabel(gold, r.ID))
			}
		})
	if err != nil {
		return err
	}
	nq, r := len(ngold), len(rows)/2
	for _, f := range []struct {
		name  string
		data  any
		shape []int
	}{
		{"feat.npy", feat, []int{r, nf}},
		{"rows.npy", rows, []int{r, 2}},
		{"ngold.npy", ngold, []int{nq}},
	} {
		if err := npy.Write(filepath.Join(out, f.name), f.data, f.shape...); err != nil {
			return err
		}
	}
	for name, v := range map[string]any{"features.json": scoring.RankFeatures, "questions.json": ids} {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "gate ranker: %d questions (%d skipped), %d candidate rows -> %s\n", nq, skipped, r, out)
	return nil
}

// pooledOnly refuses questions with their own pools (hotpotqa-distractor)
// for the exports that search the whole corpus.
func pooledOnly(qs []Question) error {
	for _, q := range qs {
		if len(q.Pool) > 0 {
			return errs.E(errs.Invalid, "per-question pools (hotpotqa-distractor) are not supported by this export; use hotpotqa")
		}
	}
	return nil
}
