package weaviate

import (
	"testing"

	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/docstore/docstoretest"
)

var _ docstore.Index = (*Store)(nil)

// The document store's index conformance suite on the real Weaviate: live
// upserts and deletes map to its batch import and batch delete, with the
// deterministic object ids of ObjectID.
func TestDocstoreConformance(t *testing.T) {
	docstoretest.Run(t, func(t *testing.T) docstoretest.Backend { return testStore(t, "") })
}
