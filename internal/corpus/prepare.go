package corpus

import (
	"context"
	"fmt"
	"sort"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// Options tune Prepare.
type Options struct {
	BatchSize int             // documents per encoder call (default 32)
	Meter     *progress.Meter // optional
	// Cache, when set, supplies the links and vectors of documents whose
	// content it has seen (keyed by graph, encoder and content), so that
	// only the others are linked and embedded; it learns those afterwards.
	Cache Cache
}

// Cache is a store of earlier links and vectors (docstore.Cache).
type Cache interface {
	Lookup(d retrieval.Document) (entities []string, okLinks bool, vector []float32, okVector bool)
	Add(docs []retrieval.Document) error
}

// EncodeText is what the encoder sees of a document.
func EncodeText(d retrieval.Document) string {
	if d.Title == "" {
		return d.Text
	}
	return d.Title + ". " + d.Text
}

// Link sets d.Entities to the distinct QIDs linked in its title and text, sorted.
func Link(ctx context.Context, g kg.Graph, d *retrieval.Document) error {
	ms, err := g.Link(ctx, d.Title+"\n"+d.Text)
	if err != nil {
		return fmt.Errorf("link document %s: %w", d.ID, err)
	}
	q := kg.QIDs(ms)
	sort.Strings(q)
	d.Entities = q
	return nil
}

// corpusEncoder is an encoder with a path for a whole corpus at once
// (onnx.Encoder: length-bucketed batches, concurrent model calls), which
// counts documents on the meter itself.
type corpusEncoder interface {
	EncodeCorpus(ctx context.Context, texts []string, m *progress.Meter) ([][]float32, error)
}

// Prepare links and embeds docs in place.
func Prepare(ctx context.Context, g kg.Graph, enc scoring.Encoder, docs []retrieval.Document, o Options) error {
	if o.Cache == nil {
		return prepare(ctx, g, enc, docs, o)
	}
	// Documents the cache has no vector for are linked and embedded in
	// batches as without a cache; those it has only lack links, if that.
	var miss []retrieval.Document
	var at []int
	hits := 0
	for i := range docs {
		ents, okL, vec, okV := o.Cache.Lookup(docs[i])
		if !okV {
			miss = append(miss, docs[i])
			at = append(at, i)
			continue
		}
		docs[i].Vector = vec
		if okL {
			docs[i].Entities = ents
		} else if err := Link(ctx, g, &docs[i]); err != nil {
			return err
		}
		hits++
	}
	if o.Meter != nil {
		o.Meter.Add(hits)
	}
	if err := prepare(ctx, g, enc, miss, o); err != nil {
		return err
	}
	for j, i := range at {
		docs[i] = miss[j]
	}
	return o.Cache.Add(docs)
}

func prepare(ctx context.Context, g kg.Graph, enc scoring.Encoder, docs []retrieval.Document, o Options) error {
	if ce, ok := enc.(corpusEncoder); ok {
		return prepareAll(ctx, g, ce, docs, o.Meter)
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 32
	}
	for start := 0; start < len(docs); start += o.BatchSize {
		end := min(start+o.BatchSize, len(docs))
		batch := docs[start:end]
		texts := make([]string, len(batch))
		for i := range batch {
			if err := Link(ctx, g, &batch[i]); err != nil {
				return err
			}
			texts[i] = EncodeText(batch[i])
		}
		vecs, err := enc.Encode(ctx, texts)
		if err != nil {
			return fmt.Errorf("encode documents %d-%d: %w", start, end-1, err)
		}
		if len(vecs) != len(batch) {
			return fmt.Errorf("encoder returned %d vectors for %d documents", len(vecs), len(batch))
		}
		for i := range batch {
			batch[i].Vector = vecs[i]
		}
		if o.Meter != nil {
			o.Meter.Add(len(batch))
		}
	}
	return nil
}

// prepareAll links every document, then embeds them all in one call.
func prepareAll(ctx context.Context, g kg.Graph, enc corpusEncoder, docs []retrieval.Document, m *progress.Meter) error {
	texts := make([]string, len(docs))
	for i := range docs {
		if err := Link(ctx, g, &docs[i]); err != nil {
			return err
		}
		texts[i] = EncodeText(docs[i])
	}
	vecs, err := enc.EncodeCorpus(ctx, texts, m)
	if err != nil {
		return fmt.Errorf("encode %d documents: %w", len(docs), err)
	}
	if len(vecs) != len(docs) {
		return fmt.Errorf("encoder returned %d vectors for %d documents", len(vecs), len(docs))
	}
	for i := range docs {
		docs[i].Vector = vecs[i]
	}
	return nil
}
