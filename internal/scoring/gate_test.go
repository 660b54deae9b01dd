package scoring_test

import (
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
)

func TestFixedGateConformance(t *testing.T) {
	for _, a := range []float64{0, 0.3, 1} {
		scoringtest.Gate(t, scoring.FixedGate{Semantic: a}, []float32{1, 0}, [][]float32{{1, 0}, {0, 1}, {0.6, 0.8}})
	}
}
