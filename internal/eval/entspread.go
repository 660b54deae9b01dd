package eval

import (
	"fmt"
	"io"

	"github.com/dmar-kg/dmar/internal/stats"
)

// EntSpread says how much the structural score ent tells one stage's
// candidates apart, over the questions of one DMAR system: the mean of the
// per-question population std of the raw ent over the stage's candidates
// (the pipeline's Result.EntStd), and the share of questions where that std
// is 0 (every candidate got the same ent: the structural path ranked
// nothing). Questions whose structural path was off (no linked entity with a
// subgraph, or the ablation) record no spread; Off counts them.
type EntSpread struct {
	Questions int     `json:"questions"` // questions with the structural path on at this stage
	Off       int     `json:"off"`       // questions of the system without a spread at this stage
	MeanStd   float64 `json:"mean_std"`
	ZeroShare float64 `json:"zero_share"` // share of Questions with std 0
	// MeanStdNonzero is the mean std over the candidates with ent > 0 only
	// (questions with at least two such candidates).
	MeanStdNonzero float64 `json:"mean_std_nonzero"`
	// MeanDistinct is the mean share of distinct ent values among the
	// candidates with ent > 0 (1: no ties).
	MeanDistinct float64 `json:"mean_distinct"`
}

// entSpreadStages are the stages the pipeline records a spread for: the
// stage-1 candidates (phase 2) and the stage-2 candidates (phase 4).
var entSpreadStages = []string{"first", "second"}

// summarizeEntSpread is, per DMAR system and stage, the spread of ent.
func summarizeEntSpread(systems []System, recs []Record) map[string]map[string]EntSpread {
	out := map[string]map[string]EntSpread{}
	bySys := map[string][]Record{}
	for _, r := range recs {
		bySys[r.System] = append(bySys[r.System], r)
	}
	for _, sys := range systems {
		if sys.Kind != "dmar" {
			continue
		}
		rs := bySys[sys.Name]
		for _, st := range entSpreadStages {
			var std, nonzero, distinct []float64
			zero := 0
			for _, r := range rs {
				v, ok := r.EntStd[st]
				if !ok {
					continue
				}
				std = append(std, v)
				if v == 0 {
					zero++
				}
				if d, ok := r.EntStd[st+"_distinct"]; ok {
					distinct = append(distinct, d)
					nonzero = append(nonzero, r.EntStd[st+"_nonzero"])
				}
			}
			sp := EntSpread{Questions: len(std), Off: len(rs) - len(std)}
			if len(std) > 0 {
				sp.MeanStd, sp.ZeroShare = stats.Mean(std), float64(zero)/float64(len(std))
			}
			if len(distinct) > 0 {
				sp.MeanStdNonzero, sp.MeanDistinct = stats.Mean(nonzero), stats.Mean(distinct)
			}
			if out[sys.Name] == nil {
				out[sys.Name] = map[string]EntSpread{}
			}
			out[sys.Name][st] = sp
		}
	}
	return out // empty without DMAR systems: results.json omits it
}

// writeEntSpread writes the report's section on the spread of ent.
func writeEntSpread(w io.Writer, s *Summary) {
	if len(s.EntSpread) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Spread of the structural score ent over each stage's candidates\n\n")
	fmt.Fprintf(w, "Per question, the population std of the raw ent over the stage's candidates; std 0 means every candidate got the same ent. Questions with the structural path off record none (\"off\").\n\n")
	fmt.Fprintf(w, "| system | stage | questions | off | mean std | share std 0 | mean std, ent > 0 | distinct share, ent > 0 |\n|---|---|---|---|---|---|---|---|\n")
	for _, sys := range s.Systems {
		n := sys.Name
		for _, st := range entSpreadStages {
			sp, ok := s.EntSpread[n][st]
			if !ok {
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %d | %d | %.3f | %.3f | %.3f | %.3f |\n", n, st, sp.Questions, sp.Off, sp.MeanStd, sp.ZeroShare, sp.MeanStdNonzero, sp.MeanDistinct)
		}
	}
}
