package weaviate

import (
	"testing"

	"github.com/dmar-kg/dmar/internal/retrieval/retrievaltest"
)

// TestConformance runs the search port's suite on a real Weaviate
// (DMAR_WEAVIATE_URL), one fresh collection per backend the suite asks for.
func TestConformance(t *testing.T) {
	serverURL(t)
	retrievaltest.Run(t, func(t *testing.T) retrievaltest.Backend { return testStore(t, "") })
}

// TestConformanceTenant runs it again with each corpus as a tenant of a
// multi-tenant collection.
func TestConformanceTenant(t *testing.T) {
	serverURL(t)
	retrievaltest.Run(t, func(t *testing.T) retrievaltest.Backend { return testStore(t, "corpus") })
}
