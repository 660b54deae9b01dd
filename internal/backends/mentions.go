package backends

import (
	"context"
	"io"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/mentions"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// openMentions is the mention index of the configured graph: Neo4j's
// MENTIONS edges, or for the embedded graph an index in memory built from
// the corpus's documents (x's, or the embedded index snapshot's when x is
// remote), which the document store keeps exact (Documents).
func openMentions(ctx context.Context, cfg config.Config, g Graph, x retrieval.Index, enc scoring.Encoder, out io.Writer) (mentions.Index, error) {
	if g.Neo4j != nil {
		return g.Neo4j.Mentions(), nil
	}
	mg, ok := g.Graph.(*memkg.Graph)
	if !ok {
		return nil, nil
	}
	docs, err := corpusDocs(ctx, cfg, g, x, enc, out)
	if err != nil {
		return nil, err
	}
	return Inputs(cfg, out).Mentions(ctx, mg, g.Key, docs)
}

// corpusDocs lists the corpus's documents when called: x's, or the
// embedded index snapshot's when x is remote (a remote index is not read
// whole).
func corpusDocs(ctx context.Context, cfg config.Config, g Graph, x retrieval.Index, enc scoring.Encoder, out io.Writer) (func() []retrieval.Document, error) {
	if mx, ok := x.(*memindex.Index); ok {
		return mx.All, nil
	}
	snap, err := embeddedIndex(ctx, cfg, g, enc, out, false)
	if err != nil {
		return nil, err
	}
	return snap.All, nil
}

// locate is docs' mentions with their places when linker is the embedded
// graph; through Neo4j, where one link call costs about half a second, every
// mention is taken as a text mention (mentions.Body) instead.
func locate(ctx context.Context, linker kg.Graph, docs []retrieval.Document) ([]mentions.Document, error) {
	if _, ok := linker.(*memkg.Graph); ok {
		return mentions.LocateAll(ctx, linker, docs)
	}
	out := make([]mentions.Document, len(docs))
	for i, d := range docs {
		out[i] = mentions.Document{ID: d.ID, Title: d.Title}
		for _, q := range d.Entities {
			out[i].Mentions = append(out[i].Mentions, mentions.Entity{QID: q})
		}
	}
	return out, nil
}
