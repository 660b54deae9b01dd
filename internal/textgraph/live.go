package textgraph

import (
	"context"
	"io"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// Writable is a text graph that takes passages: Put adds or replaces them
// (built by b: Builder.Prepare), Delete takes their contributions back.
// Memory and Neo4j's store both are.
type Writable interface {
	Put(ctx context.Context, b Builder, docs []retrieval.Document) error
	Delete(ctx context.Context, ids []string) error
}

// Live keeps a text graph exact under the document store's writes: a
// passage put is extracted, linked and embedded by Builder as the corpus
// was at load, replacing what it held before; a passage deleted gives back
// its contributions.
type Live struct {
	Store   Writable
	Builder Builder
}

// Put adds or replaces docs' passages.
func (l Live) Put(ctx context.Context, docs []retrieval.Document) error {
	return l.Store.Put(ctx, l.Builder, docs)
}

// Delete removes passages; unknown IDs are ignored.
func (l Live) Delete(ctx context.Context, ids []string) error {
	return l.Store.Delete(ctx, ids)
}

// Close ends the extractor's process, if it keeps one (spaCy's); a later
// Put starts it again.
func (l Live) Close() error {
	if c, ok := l.Builder.Extractor.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
