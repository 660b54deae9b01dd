package neo4jkg_test

import (
	"testing"

	"github.com/dmar-kg/dmar/internal/kg/kgtest"
)

// Tests that hold one data set follow each other: each change of data set
// reloads Neo4j.

func TestConformanceFilm(t *testing.T) {
	s, dir := holding(t, "codexm-film")
	kgtest.Run(t, dir, s)
}

func TestCandidateLinkerConformanceFilm(t *testing.T) {
	s, dir := holding(t, "codexm-film")
	kgtest.RunCandidateLinker(t, dir, s)
}

func TestConformanceCodexM(t *testing.T) {
	if testing.Short() {
		t.Skip("full codexm in -short mode")
	}
	s, dir := holding(t, "codexm")
	kgtest.Run(t, dir, s)
}

func TestCandidateLinkerConformanceCodexM(t *testing.T) {
	if testing.Short() {
		t.Skip("full codexm in -short mode")
	}
	s, dir := holding(t, "codexm")
	kgtest.RunCandidateLinker(t, dir, s)
}
