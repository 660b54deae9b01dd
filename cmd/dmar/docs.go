package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
)

func init() {
	register("docs put", "add or replace documents on a running dmar serve from a JSONL file ({id, title, text, metadata?} a line; - for stdin)", runDocsPut)
	register("docs get", "print a stored document with its entity links", runDocsGet)
	register("docs delete", "delete documents by id (all or nothing)", runDocsDelete)
}

// openDocuments opens the document store over the backends pipelineFor
// wired: its log is in the state folder, under a name of the corpus (for
// the embedded index) or of the Weaviate class; Neo4j, when it is the
// graph, gets the MENTIONS edges.
func (a *appFlags) openDocuments(ctx context.Context, m *models, log *slog.Logger) (*docstore.Store, error) {
	g := a.opened.graph
	linker, kgKey := g.graph, g.key
	if g.neo4j != nil {
		// Link as the corpus was linked (embeddedIndex): with the bundle
		// when configured, else through Neo4j.
		if mg, k, err := a.inputs(nil).Graph(ctx); err == nil {
			linker, kgKey = mg, k
		} else {
			kgKey = a.cfg.Graph
		}
	}
	cfg := docstore.Config{Graph: linker, KGKey: kgKey, Encoder: m.DocEncoder, Logger: log}
	var name string
	switch x := a.opened.index.(type) {
	case *memindex.Index:
		cfg.Index, cfg.Replay = x, true
		abs, err := filepath.Abs(a.cfg.CorpusFile())
		if err != nil {
			return nil, err
		}
		name = "embedded|" + abs
	case *weaviate.Store:
		cfg.Index = x
		name = "weaviate|" + a.cfg.Index
	default:
		return nil, fmt.Errorf("documents: index %T cannot take writes", a.opened.index)
	}
	if g.neo4j != nil {
		cfg.Links = neo4jLinks{g.neo4j}
	}
	sum := sha256.Sum256([]byte(name))
	cfg.Dir = filepath.Join(a.cfg.State, "documents", hex.EncodeToString(sum[:8]))
	cache, err := docstore.OpenCache(a.cfg.State, docstore.EncoderKey(m.DocEncoder), kgKey)
	if err != nil {
		return nil, err
	}
	cfg.Cache = cache
	if a.cfg.ORT.WritePriority != "normal" {
		// Writes embed on threads searches preempt (docs/documents.md).
		bg, err := m.DocEncoder.Background(0, a.cfg.ORT.WritePriority == "idle")
		if err != nil {
			cache.Close()
			return nil, err
		}
		if n, err := bg.Lowered(); err != nil {
			log.Warn("live documents: write-time embedding runs at normal priority", "lowered_workers", n, "err", err)
		}
		cfg.Encoder, cfg.OnClose = bg, bg.Close
	}
	st, err := docstore.Open(ctx, cfg)
	if err != nil {
		cache.Close()
		if cfg.OnClose != nil {
			cfg.OnClose()
		}
		return nil, err
	}
	return st, nil
}

// neo4jLinks writes documents' links as Neo4j MENTIONS edges.
type neo4jLinks struct{ st *neo4jkg.Store }

func (l neo4jLinks) ReplaceLinks(ctx context.Context, docs []retrieval.Document) error {
	links := make([]neo4jkg.DocumentLink, len(docs))
	for i, d := range docs {
		links[i] = neo4jkg.DocumentLink{ID: d.ID, Title: d.Title, Entities: d.Entities}
	}
	return l.st.ReplaceDocuments(ctx, links)
}

func (l neo4jLinks) DeleteLinks(ctx context.Context, ids []string) error {
	return l.st.DeleteDocuments(ctx, ids)
}

// docsClient parses the flags every docs subcommand shares.
func docsClient(name string, args []string, stderr io.Writer, more func(*flag.FlagSet)) (*api.Client, *flag.FlagSet, error) {
	fs := newFlagSet(name, stderr)
	base := fs.String("url", api.DefaultURL, "the server's base URL (API key: env DMAR_API_KEY)")
	if more != nil {
		more(fs)
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, flagErr(err)
	}
	var opts []api.Option
	if k := config.ClientAPIKey(os.Getenv); k != "" {
		opts = append(opts, api.WithAPIKey(k))
	}
	c, err := api.NewClient(*base, nil, opts...)
	if err != nil {
		return nil, nil, usageError{err.Error()}
	}
	return c, fs, nil
}

func runDocsPut(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	batch := 64
	c, fs, err := docsClient("docs put", args, stderr, func(fs *flag.FlagSet) {
		fs.IntVar(&batch, "batch", batch, "documents per request (at most 256)")
	})
	if err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"docs put: give one JSONL file (or -)"}
	}
	in := io.Reader(os.Stdin)
	if p := fs.Arg(0); p != "-" {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	res, err := api.PutDocumentsFrom(ctx, c, in, batch)
	fmt.Fprintf(stdout, "created %d, updated %d, unchanged %d, rejected %d\n", res.Created, res.Updated, res.Unchanged, len(res.Rejected))
	for _, r := range res.Rejected {
		fmt.Fprintf(stdout, "  rejected %q: %s\n", r.ID, r.Reason)
	}
	return err
}

func runDocsGet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, fs, err := docsClient("docs get", args, stderr, nil)
	if err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"docs get: give one document id"}
	}
	d, err := c.Document(ctx, fs.Arg(0))
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

func runDocsDelete(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, fs, err := docsClient("docs delete", args, stderr, nil)
	if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError{"docs delete: give at least one document id"}
	}
	res, err := c.DeleteDocuments(ctx, fs.Args())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "deleted %d\n", res.Deleted)
	return nil
}
