package textgraph

import (
	"context"
	"io"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// Live keeps a Memory exact under the document store's writes: a passage
// put is extracted, linked and embedded by Builder as the corpus was at
// load, replacing what it held before; a passage deleted gives back its
// contributions (Memory.Put, Memory.Delete).
type Live struct {
	Memory  *Memory
	Builder Builder
}

// Put adds or replaces docs' passages.
func (l Live) Put(ctx context.Context, docs []retrieval.Document) error {
	return l.Memory.Put(ctx, l.Builder, docs)
}

// Delete removes passages; unknown IDs are ignored.
func (l Live) Delete(ctx context.Context, ids []string) error {
	return l.Memory.Delete(ctx, ids)
}

// Close ends the extractor's process, if it keeps one (spaCy's); a later
// Put starts it again.
func (l Live) Close() error {
	if c, ok := l.Builder.Extractor.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
