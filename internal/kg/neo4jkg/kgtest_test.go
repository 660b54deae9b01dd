package neo4jkg_test

import (
	"testing"

	"github.com/dmar-kg/dmar/internal/kg/kgtest"
)

func TestConformanceFilm(t *testing.T) {
	s, dir := holding(t, "codexm-film")
	kgtest.Run(t, dir, s)
}

func TestConformanceCodexM(t *testing.T) {
	if testing.Short() {
		t.Skip("full codexm in -short mode")
	}
	s, dir := holding(t, "codexm")
	kgtest.Run(t, dir, s)
}
