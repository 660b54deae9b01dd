package neo4jkg_test

import (
	"testing"

	"github.com/dmar-kg/dmar/internal/mentions/mentionstest"
)

// The MENTIONS edges pass the mention index's conformance suite, as the
// embedded index does (memkg).
func TestMentionsConformance(t *testing.T) {
	s, _ := holding(t, "codexm-film")
	mentionstest.Run(t, s.Mentions())
}
