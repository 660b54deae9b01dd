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
	return replaceDocs(ctx, s, "replace documents", cypher.ReplaceDocuments, docs, func(d DocumentLink) (string, map[string]any) {
		return d.ID, map[string]any{"id": d.ID, "title": d.Title, "entities": nonNil(d.Entities)}
	})
}

// replaceDocs writes docs with query as rows of $docs, 1,000 a transaction,
// each document's row made by row; a document without an id (row's first
// value) fails the call before anything is written.
func replaceDocs[D any](ctx context.Context, s *Store, what, query string, docs []D, row func(D) (id string, r map[string]any)) error {
	rows := make([]map[string]any, len(docs))
	for i, d := range docs {
		id, r := row(d)
		if id == "" {
			return fmt.Errorf("neo4jkg: document %d has no id", i)
		}
		rows[i] = r
	}
	return inBatches(ctx, len(rows), func(lo, hi int) error {
		_, err := s.write(ctx, what, query, map[string]any{"docs": rows[lo:hi]}, false)
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
