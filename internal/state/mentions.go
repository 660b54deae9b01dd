package state

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dmar-kg/dmar/internal/gobfile"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/mentions"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// mentionsSnapshot is what the mention index's snapshot holds: the
// corpus's documents' located mentions, in corpus order.
type mentionsSnapshot struct {
	Version string
	Docs    []mentions.Document
}

// Mentions returns the embedded mention index of the corpus linked with g
// (kgKey): located from the corpus's documents (docs, called only when
// needed) and snapshotted, or read from its snapshot when the corpus and
// the graph are unchanged. Locating links each document's title and first
// sentence again: seconds for a corpus of 16k documents, paid once.
func (in Inputs) Mentions(ctx context.Context, g *memkg.Graph, kgKey string, docs func() []retrieval.Document) (*memkg.Mentions, error) {
	key, err := Fingerprint(in.corpusFiles(), kgKey, mentions.Version)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w (set --data or --corpus)", err)
	}
	snap := filepath.Join(in.Dir, "mentions-"+key+".gob")
	ms, err := readMentions(snap)
	if err != nil {
		if ms, err = mentions.LocateAll(ctx, g, docs()); err != nil {
			return nil, err
		}
		if err := writeMentions(snap, ms); err != nil {
			return nil, err
		}
	}
	ix := memkg.NewMentions(g)
	if err := ix.Replace(ctx, ms); err != nil {
		return nil, err
	}
	return ix, nil
}

func readMentions(path string) ([]mentions.Document, error) {
	var s mentionsSnapshot
	if err := gobfile.Read(path, &s); err != nil {
		return nil, err
	}
	if s.Version != mentions.Version {
		return nil, errors.New("mentions snapshot of another version")
	}
	return s.Docs, nil
}

func writeMentions(path string, docs []mentions.Document) error {
	return gobfile.Write(path, mentionsSnapshot{Version: mentions.Version, Docs: docs})
}
