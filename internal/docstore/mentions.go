package docstore

import (
	"context"
	"fmt"
	"sort"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/mentions"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// The in-process mention index (Config.Mentions) and text graph
// (Config.TextGraph) hold the corpus when the store opens, and nothing of
// the log: the store replays the log's outcome into them and keeps them
// exact on every write after that.

// locate is the mentions of docs, located with the graph they were linked
// with; nil without a mention index.
func (s *Store) locate(ctx context.Context, docs []retrieval.Document) ([]mentions.Document, error) {
	if s.cfg.Mentions == nil {
		return nil, nil
	}
	ms, err := mentions.LocateAll(ctx, s.cfg.Graph, docs)
	if err != nil {
		return nil, fmt.Errorf("locate the documents' mentions: %w", err)
	}
	return ms, nil
}

// replayDerived applies the log's outcome to the mention index and the
// text graph, which hold the corpus as it was loaded: the IDs the log ever
// deleted go (a corpus document deleted and put again comes back with the
// put), then its live documents are put, each linked again when the log
// holds links made under another graph.
func (s *Store) replayDerived(ctx context.Context, st *replayState) error {
	text := s.cfg.TextGraph != nil && !s.cfg.TextGraphKeeps
	if (s.cfg.Mentions == nil && !text) || (len(st.deleted) == 0 && len(st.live) == 0) {
		return nil
	}
	gone := make([]string, 0, len(st.deleted))
	for id := range st.deleted {
		gone = append(gone, id)
	}
	sort.Strings(gone)
	docs := make([]retrieval.Document, 0, len(st.live))
	for _, d := range st.live {
		doc := retrieval.Document{ID: d.ID, Title: d.Title, Text: d.Text, Entities: d.Entities}
		if d.KG != s.cfg.KGKey {
			if err := corpus.Link(ctx, s.cfg.Graph, &doc); err != nil {
				return err
			}
		}
		docs = append(docs, doc)
	}
	sort.Slice(docs, func(i, j int) bool { return st.order[docs[i].ID] < st.order[docs[j].ID] })
	if s.cfg.Mentions != nil {
		if err := s.cfg.Mentions.Delete(ctx, gone); err != nil {
			return err
		}
		ms, err := s.locate(ctx, docs)
		if err != nil {
			return err
		}
		if err := s.cfg.Mentions.Replace(ctx, ms); err != nil {
			return err
		}
	}
	if text {
		if err := s.cfg.TextGraph.Delete(ctx, gone); err != nil {
			return fmt.Errorf("text graph: %w", err)
		}
		if err := s.cfg.TextGraph.Put(ctx, docs); err != nil {
			return fmt.Errorf("text graph: %w", err)
		}
	}
	return nil
}
