package neo4jkg

import (
	"context"
	"fmt"

	"github.com/dmar-kg/dmar/cypher"
)

// ReplaceDocuments sets each document's (:Document {id, title}) node and
// makes its MENTIONS edges exactly its entities (edges to entities it no
// longer mentions are removed), for live document updates.
func (s *Store) ReplaceDocuments(ctx context.Context, docs []DocumentLink) error {
	for i, d := range docs {
		if d.ID == "" {
			return fmt.Errorf("neo4jkg: document %d has no id", i)
		}
	}
	return inBatches(ctx, len(docs), func(lo, hi int) error {
		rows := make([]map[string]any, 0, hi-lo)
		for _, d := range docs[lo:hi] {
			rows = append(rows, map[string]any{"id": d.ID, "title": d.Title, "entities": nonNil(d.Entities)})
		}
		_, err := s.write(ctx, "replace documents", cypher.ReplaceDocuments, map[string]any{"docs": rows}, false)
		return err
	})
}

// DeleteDocuments removes the documents' nodes and their MENTIONS edges;
// unknown ids are ignored.
func (s *Store) DeleteDocuments(ctx context.Context, ids []string) error {
	return inBatches(ctx, len(ids), func(lo, hi int) error {
		_, err := s.write(ctx, "delete documents", cypher.DeleteDocuments, map[string]any{"ids": nonNil(ids[lo:hi])}, false)
		return err
	})
}

// inBatches calls write on [lo, hi) ranges of n items, 1,000 at a time
// (one transaction each).
func inBatches(ctx context.Context, n int, write func(lo, hi int) error) error {
	const batch = 1000
	for lo := 0; lo < n; lo += batch {
		if err := write(lo, min(lo+batch, n)); err != nil {
			return err
		}
	}
	return ctx.Err()
}
