package eval

import (
	"fmt"
	"strings"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

// System is one retrieval configuration compared in a run.
type System struct {
	Name string `json:"name"`
	// Kind is bm25, dense, hybrid (one search) or dmar (the pipeline).
	Kind  string  `json:"kind"`
	Alpha float64 `json:"alpha,omitempty"` // hybrid: weight of the vector side
	// Options are the pipeline options (dmar systems).
	Options *pipeline.Options `json:"options,omitempty"`
	Ablates string            `json:"ablates,omitempty"` // what the ablation changes, for the report
}

// Baseline reports whether s is one of the baselines DMAR is compared against.
func (s System) Baseline() bool { return s.Kind != "dmar" }

// SystemNames are the systems a run knows, in report order.
var SystemNames = []string{"bm25", "dense", "hybrid", "dmar", "dmar-no-reform", "dmar-no-kg", "dmar-m1", "dmar-fixed-gate", "dmar-ged", "dmar-mc50"}

// Systems builds the named systems. base is the DMAR configuration the
// ablations start from; its K is raised to kmax (and P with it) so that
// every system returns kmax documents.
func Systems(names []string, base pipeline.Options, kmax int, alpha float64) ([]System, error) {
	base.K = kmax
	base.P = max(base.P, kmax)
	var out []System
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		o := base
		s := System{Name: n, Kind: "dmar"}
		switch n {
		case "bm25", "dense":
			s.Kind = n
		case "hybrid":
			s.Kind, s.Alpha = n, alpha
		case "dmar":
		case "dmar-no-reform":
			o.Reformulator, s.Ablates = "none", "no reformulation (stage 2 searches with Q)"
		case "dmar-no-kg":
			o.Structure, s.Ablates = "off", "no KG path (semantic score only)"
		case "dmar-m1":
			o.M, s.Ablates = 1, "single anchor (m=1)"
		case "dmar-fixed-gate":
			o.Gate, s.Ablates = "fixed", fmt.Sprintf("fixed fusion weights %.2f/%.2f instead of the gate", o.FixedAlpha, 1-o.FixedAlpha)
		case "dmar-ged":
			o.Structure, s.Ablates = "ged", "graph-edit-distance heuristic instead of the GNN"
		case "dmar-mc50":
			o.Shapley, o.Samples, s.Ablates = "montecarlo", 50, "Monte Carlo Shapley, T=50, instead of exact"
		default:
			return nil, fmt.Errorf("unknown system %q (known: %s)", n, strings.Join(SystemNames, ", "))
		}
		if s.Kind == "dmar" {
			if err := o.Validate(); err != nil {
				return nil, fmt.Errorf("system %s: %w", n, err)
			}
			s.Options = &o
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no systems given (known: %s)", strings.Join(SystemNames, ", "))
	}
	return out, nil
}
