package backends

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
)

// Documents opens the document store over the set's backends: its log is in
// the state folder, under a name of the corpus (for the embedded index) or
// of the Weaviate class; Neo4j, when it is the graph, gets the MENTIONS
// edges. Documents are linked as the corpus was (linkerOf).
func (s *Set) Documents(ctx context.Context, log *slog.Logger) (*docstore.Store, error) {
	linker, kgKey := linkerOf(ctx, s.cfg, s.Graph, nil)
	cfg := docstore.Config{Graph: linker, KGKey: kgKey, Encoder: s.Models.DocEncoder, Logger: log}
	name, err := s.documentIndex(&cfg)
	if err != nil {
		return nil, err
	}
	if s.Graph.Neo4j != nil {
		cfg.Links = neo4jLinks{s.Graph.Neo4j, linker}
	}
	if mx, ok := s.Mentions.(*memkg.Mentions); ok {
		cfg.Mentions = mx
	}
	if s.textLive != nil {
		cfg.TextGraph, cfg.TextGraphKeeps = s.textLive, s.Graph.Neo4j != nil
	}
	sum := sha256.Sum256([]byte(name))
	cfg.Dir = filepath.Join(s.cfg.State, "documents", hex.EncodeToString(sum[:8]))
	cache, err := docstore.OpenCache(s.cfg.State, docstore.EncoderKey(s.Models.DocEncoder), kgKey)
	if err != nil {
		return nil, err
	}
	cfg.Cache = cache
	if err := s.writeEncoder(&cfg, log); err != nil {
		cache.Close()
		return nil, err
	}
	st, err := docstore.Open(ctx, cfg)
	if err != nil {
		cache.Close()
		if cfg.OnClose != nil {
			err = errors.Join(err, cfg.OnClose())
		}
		return nil, err
	}
	return st, nil
}

// documentIndex sets the index the store writes to and returns the name its
// log is kept under.
func (s *Set) documentIndex(cfg *docstore.Config) (string, error) {
	switch x := s.Index.(type) {
	case *memindex.Index:
		cfg.Index, cfg.Replay = x, true
		abs, err := filepath.Abs(s.cfg.CorpusFile())
		if err != nil {
			return "", err
		}
		return "embedded|" + abs, nil
	case *weaviate.Store:
		cfg.Index = x
		return "weaviate|" + s.cfg.Index, nil
	}
	return "", fmt.Errorf("documents: index %T cannot take writes", s.Index)
}

// writeEncoder gives the store an encoder whose threads searches preempt,
// unless the write priority is normal (docs/documents.md).
func (s *Set) writeEncoder(cfg *docstore.Config, log *slog.Logger) error {
	if s.cfg.ORT.WritePriority == "normal" {
		return nil
	}
	bg, err := s.Models.DocEncoder.Background(0, s.cfg.ORT.WritePriority == "idle")
	if err != nil {
		return err
	}
	if n, err := bg.Lowered(); err != nil {
		log.Warn("live documents: write-time embedding runs at normal priority", "lowered_workers", n, "err", err)
	}
	cfg.Encoder, cfg.OnClose = bg, bg.Close
	return nil
}

// neo4jLinks writes documents' links as Neo4j MENTIONS edges with their
// places, located with the graph the documents were linked with.
type neo4jLinks struct {
	st     *neo4jkg.Store
	linker kg.Graph
}

func (l neo4jLinks) ReplaceLinks(ctx context.Context, docs []retrieval.Document) error {
	ms, err := locate(ctx, l.linker, docs)
	if err != nil {
		return err
	}
	return l.st.Mentions().Replace(ctx, ms)
}

func (l neo4jLinks) DeleteLinks(ctx context.Context, ids []string) error {
	return l.st.DeleteDocuments(ctx, ids)
}
