package eval

import (
	"context"
	"fmt"
	"io"

	"github.com/dmar-kg/dmar/internal/progress"
)

// exportQuestions is the question loop of the training-data exports
// (GateEvidence, GateRanker): each question that want accepts (nil: every
// one) is run by retrieve, and its rows handed to add with the question's
// index and gold set. It returns the gold count of every question added, in
// index order (an error when there is none); a question whose run fails is counted, logged on stderr
// under name and skipped, and a cancelled ctx stops the loop.
func exportQuestions[R any](ctx context.Context, name string, qs []Question, stderr io.Writer, want func(Question) bool,
	retrieve func(Question) ([]R, error), add func(qi int32, gold map[string]bool, rows []R)) (ngold []int32, skipped int, err error) {
	meter := progress.New(stderr, name, "questions", len(qs))
	defer meter.Done()
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		meter.Add(1)
		if want != nil && !want(q) {
			continue
		}
		rows, err := retrieve(q)
		if err != nil {
			if ctx.Err() != nil {
				return nil, 0, ctx.Err()
			}
			skipped++
			fmt.Fprintf(stderr, "%s: skipped %s: %v\n", name, q.ID, err)
			continue
		}
		gold := set(q.Gold)
		add(int32(len(ngold)), gold, rows)
		ngold = append(ngold, int32(len(gold)))
	}
	if len(ngold) == 0 {
		return nil, skipped, fmt.Errorf("%s: no question could be run (%d skipped)", name, skipped)
	}
	return ngold, skipped, nil
}

// goldLabel is a training row's label: 1 for a gold document.
func goldLabel(gold map[string]bool, id string) int32 {
	if gold[id] {
		return 1
	}
	return 0
}
