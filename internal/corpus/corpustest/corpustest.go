// Package corpustest loads a shared data set for tests as dmar serve loads
// it: the KG in memory, and the corpus linked, embedded and indexed.
package corpustest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// ErrNoData is in Graph's error where the shared data is absent, for tests
// that skip then.
var ErrNoData = errors.New("shared data not found")

// Graph reads the KG of the shared data set name (e.g. "codexm-film") into
// memory, and returns it with the data set's folder.
func Graph(ctx context.Context, name string) (*memkg.Graph, string, error) {
	dir, err := datapath.Dataset(name)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %w", ErrNoData, err)
	}
	b, err := bundle.Read(ctx, dir)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	return memkg.FromBundle(b), dir, nil
}

// Index reads the corpus of the data set in dir (corpus.jsonl), links its
// documents with g and embeds them with enc (corpus.Prepare), and puts them
// in a new in-memory index.
func Index(ctx context.Context, g kg.Graph, dir string, enc scoring.Encoder) ([]retrieval.Document, *memindex.Index, error) {
	docs, _, err := corpus.ReadFile(ctx, filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	if err := corpus.Prepare(ctx, g, enc, docs, corpus.Options{}); err != nil {
		return nil, nil, err
	}
	x := memindex.New(memindex.DefaultParams())
	if err := x.Put(ctx, docs); err != nil {
		return nil, nil, err
	}
	return docs, x, nil
}
