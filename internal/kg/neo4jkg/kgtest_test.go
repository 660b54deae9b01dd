package neo4jkg_test

import (
	"testing"

	"github.com/dmar-kg/dmar/internal/kg/kgtest"
)

// Each data set is loaded once, for both suites: each change of data set
// reloads Neo4j.
func TestConformance(t *testing.T) {
	kgtest.Datasets(t, func(t *testing.T, name string) {
		s, dir := holding(t, name)
		t.Run("Graph", func(t *testing.T) { kgtest.Run(t, dir, s) })
		t.Run("CandidateLinker", func(t *testing.T) { kgtest.RunCandidateLinker(t, dir, s) })
	})
}
