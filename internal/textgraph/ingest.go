package textgraph

import (
	"context"
	"fmt"

	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// PutAll puts docs in batches of batch documents, as a Put of each batch in
// turn would, but extracts the next batch's phrases while the current one is
// linked, embedded and written: the extractor (spaCy's own process) and the
// encoder then work at once instead of in turn. meter, when not nil, counts
// the documents written (rate and ETA).
func (m *Memory) PutAll(ctx context.Context, b Builder, docs []retrieval.Document, batch int, meter *progress.Meter) error {
	if batch < 1 {
		return fmt.Errorf("text graph: batch %d: want at least 1", batch)
	}
	type extracted struct {
		docs []retrieval.Document
		exs  []Extraction
		err  error
	}
	ctx, cancel := context.WithCancel(ctx)
	ahead := make(chan extracted, 1) // one batch extracted ahead
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(ahead)
		for lo := 0; lo < len(docs); lo += batch {
			part := docs[lo:min(lo+batch, len(docs))]
			exs, err := b.extract(ctx, part)
			select {
			case ahead <- extracted{part, exs, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	// The extractor is left idle when PutAll returns (its caller may close
	// it): cancelled, the goroutine sends nothing more and ends.
	defer func() {
		cancel()
		<-done
	}()
	for e := range ahead {
		if e.err != nil {
			return e.err
		}
		p, err := b.prepareExtracted(ctx, e.docs, e.exs, m.known)
		if err != nil {
			return err
		}
		m.apply(p, b)
		if meter != nil {
			meter.Add(len(e.docs))
		}
	}
	return ctx.Err()
}
