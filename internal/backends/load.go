package backends

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// LoadGraph opens the embedded graph of cfg, building its snapshot if
// needed (dmar load kg), and says on out what it holds.
func LoadGraph(ctx context.Context, cfg config.Config, out io.Writer) error {
	g, _, err := OpenGraph(ctx, cfg, out)
	if err != nil {
		return err
	}
	if s, ok := g.Graph.(interface{ Stats() (int, int, int) }); ok {
		e, t, r := s.Stats()
		fmt.Fprintf(out, "graph ready: %d entities, %d triples, %d relations (state %s)\n", e, t, r, cfg.State)
	}
	return nil
}

// LoadCorpus links and embeds the corpus of cfg into its search backend,
// and the text graph with it when one is configured (dmar load corpus);
// progress goes to progressOut, the documents' count to out.
func LoadCorpus(ctx context.Context, cfg config.Config, out, progressOut io.Writer, log *slog.Logger) error {
	m, err := OpenModels(cfg, log)
	if err != nil {
		return err
	}
	defer m.Close()
	g, _, err := OpenGraph(ctx, cfg, progressOut)
	if err != nil {
		return err
	}
	x, _, err := OpenIndex(ctx, cfg, g, m.DocEncoder, progressOut, true)
	if err != nil {
		return err
	}
	if err := LoadTextGraph(ctx, cfg, g, x, m.DocEncoder, progressOut); err != nil {
		return err
	}
	if w, ok := x.(retrieval.Writer); ok {
		n, err := w.Count(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "index ready: %d documents (state %s)\n", n, cfg.State)
	}
	return nil
}
