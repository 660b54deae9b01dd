package state

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var s mentionsSnapshot
	if err := gob.NewDecoder(bufio.NewReader(f)).Decode(&s); err != nil {
		return nil, fmt.Errorf("mentions snapshot %s: %w", path, err)
	}
	if s.Version != mentions.Version {
		return nil, errors.New("mentions snapshot of another version")
	}
	return s.Docs, nil
}

// writeMentions writes the snapshot through a temporary file, so that a
// crash leaves the old one or none.
func writeMentions(path string, docs []mentions.Document) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	w := bufio.NewWriter(tmp)
	err = gob.NewEncoder(w).Encode(mentionsSnapshot{Version: mentions.Version, Docs: docs})
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save mentions snapshot: %w", err)
	}
	return nil
}
