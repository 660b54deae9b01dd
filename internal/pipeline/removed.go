package pipeline

import "github.com/dmar-kg/dmar/internal/errs"

// RemovedOptions are the request options that were removed, each with
// why: a request that names one is refused with that reason
// (RemovedOption). Their figures stay in docs/method.md; the learned
// relation prior (path_prior) is a composition of dmar eval's
// (Pipeline.WithPathPrior), the others are gone from the code.
var RemovedOptions = map[string]string{
	"graph_fanout":     "the fan-out normaliser did not help dmar significantly on kgqa train",
	"utility":          "the question-conditioned utility changed no ranking for the better on top of dmar",
	"path_weight":      "it weighed the question-conditioned utility, which changed no ranking for the better on top of dmar",
	"path_prior":       "the learned relation prior lowered the graph channel's recall on kgqa dev",
	"reform_rank":      "question-ranked reformulation changed nothing dmar's metrics see on kgqa train",
	"reform_bridges":   "it capped question-ranked reformulation, which changed nothing dmar's metrics see on kgqa train",
	"reform_relations": "it capped question-ranked reformulation, which changed nothing dmar's metrics see on kgqa train",
}

// RemovedOption is err, or, when err refuses a field that names a removed
// option (a decoder's unknown field), a 400 that says it was removed and
// why.
func RemovedOption(err error) error {
	e, ok := errs.As(err)
	if !ok || e.Field == "" {
		return err
	}
	why, removed := RemovedOptions[e.Field]
	if !removed {
		return err
	}
	return errs.Field(e.Field, "was removed: %s (docs/method.md has its figures)", why)
}
