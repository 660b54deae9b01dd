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
	const batch = 1000
	for i := 0; i < len(docs); i += batch {
		part := docs[i:min(i+batch, len(docs))]
		rows := make([]map[string]any, len(part))
		for j, d := range part {
			if d.ID == "" {
				return fmt.Errorf("neo4jkg: document %d has no id", i+j)
			}
			rows[j] = map[string]any{"id": d.ID, "title": d.Title, "entities": nonNil(d.Entities)}
		}
		if _, err := s.write(ctx, "replace documents", cypher.ReplaceDocuments, map[string]any{"docs": rows}, false); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// DeleteDocuments removes the documents' nodes and their MENTIONS edges;
// unknown ids are ignored.
func (s *Store) DeleteDocuments(ctx context.Context, ids []string) error {
	const batch = 1000
	for i := 0; i < len(ids); i += batch {
		part := ids[i:min(i+batch, len(ids))]
		if _, err := s.write(ctx, "delete documents", cypher.DeleteDocuments, map[string]any{"ids": nonNil(part)}, false); err != nil {
			return err
		}
	}
	return ctx.Err()
}
