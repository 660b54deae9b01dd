package state

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/textgraph"
)

// textGraphBatch is how many documents one Put of the build takes.
const textGraphBatch = 512

// TextGraph returns the text graph of the corpus (docs, called only when
// needed) built by b, from its snapshot when the corpus, the graph (kgKey),
// the extractor (extractorKey: its name and version) and the encoder are
// unchanged, else built and snapshotted. A build gives b the state's cache
// of label vectors (unless b has one), so that later writes through b use
// it too, and saves it.
func (in Inputs) TextGraph(ctx context.Context, b *textgraph.Builder, kgKey, extractorKey string, docs func() []retrieval.Document) (*textgraph.Memory, error) {
	enc := ""
	if b.Encoder != nil {
		enc = b.Encoder.Version()
	}
	key, err := Fingerprint(in.corpusFiles(), kgKey, extractorKey, enc, textgraph.Version)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w (set --data or --corpus)", err)
	}
	snap := filepath.Join(in.Dir, "textgraph-"+key+".gob")
	if m, err := textgraph.Load(snap); err == nil {
		return m, nil
	}
	start := time.Now()
	all := docs()
	var vecPath string
	if b.Encoder != nil && b.Vectors == nil {
		// The labels' vectors outlive the snapshot: a corpus that gained
		// documents is built again, embedding only the labels new to it.
		vk, err := Fingerprint(nil, enc)
		if err != nil {
			return nil, err
		}
		vecPath = filepath.Join(in.Dir, "textgraph-vectors-"+vk+".gob")
		if b.Vectors, err = textgraph.LoadVectors(vecPath, enc); err != nil {
			return nil, err
		}
	}
	m := textgraph.NewMemory()
	meter := progress.New(in.Log, "text graph ("+extractorKey+")", "documents", len(all))
	if err := m.PutAll(ctx, *b, all, textGraphBatch, meter); err != nil {
		return nil, err
	}
	meter.Done()
	if err := m.Save(snap); err != nil {
		return nil, err
	}
	if vecPath != "" {
		if err := b.Vectors.Save(vecPath); err != nil {
			return nil, err
		}
	}
	if in.Log != nil {
		fmt.Fprintf(in.Log, "text graph: %s, built in %s\n", m.Stats(), time.Since(start).Round(time.Millisecond))
	}
	return m, nil
}
