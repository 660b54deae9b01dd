package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/loaders/sinks"
)

func init() {
	register("load kg", "load a KG bundle (triples.tsv, entities.jsonl, relations.json) into the graph backend, or finish a neo4j-admin CSV import (--after-import)", runLoadKG)
	register("load corpus", "link and embed a JSONL corpus and load it into the search backend", runLoadCorpus)
	register("load neo4j", "deprecated: dmar load kg --graph bolt://HOST:PORT (same flags; --uri and --bundle still work)", runLoadNeo4j)
}

func runLoadKG(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var l neo4jkg.LoadOptions
	fs := a.flags("load kg", stderr)
	l.RegisterFlags(fs)
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if !a.cfg.GraphBackend().Embedded() {
		l.Progress = a.progressOut(stderr)
		return neo4jkg.Load(ctx, a.neo4jConfig(), a.cfg.BundleDir(), l, stdout, stderr)
	}
	if l.AfterImport || l.Wipe || l.Checkpoint != "" {
		return usageError{"load kg: --after-import, --wipe and --checkpoint need --graph neo4j://HOST:PORT (or bolt://)"}
	}
	g, _, err := a.openGraph(ctx, stdout)
	if err != nil {
		return err
	}
	if s, ok := g.graph.(interface{ Stats() (int, int, int) }); ok {
		e, t, r := s.Stats()
		fmt.Fprintf(stdout, "graph ready: %d entities, %d triples, %d relations (state %s)\n", e, t, r, a.cfg.State)
	}
	return nil
}

// runLoadNeo4j is the deprecated dmar load neo4j: load kg, with its old
// flags --uri (now --graph; default $DMAR_NEO4J_URI, else
// bolt://127.0.0.1:7687), --bundle (now --kg) and --user (now
// DMAR_NEO4J_USER) still accepted.
func runLoadNeo4j(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fmt.Fprintln(stderr, "dmar: note: `dmar load neo4j` is deprecated; use `dmar load kg --graph bolt://HOST:PORT` (--kg DIR, --after-import, --checkpoint FILE)")
	var a appFlags
	var l neo4jkg.LoadOptions
	fs := a.flags("load neo4j", stderr)
	l.RegisterFlags(fs)
	old, err := neo4jkg.RegisterLegacyFlags(fs, config.LegacyNeo4jURI(os.Getenv))
	if err != nil {
		return err
	}
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if err := old.Check(l, !a.cfg.GraphBackend().Embedded()); err != nil {
		return cliErr(err)
	}
	if old.User != "" {
		a.cfg.Neo4j.User = old.User
	}
	l.Progress = a.progressOut(stderr)
	return neo4jkg.Load(ctx, a.neo4jConfig(), a.cfg.BundleDir(), l, stdout, stderr)
}

// cliErr makes an errs.Invalid error or a bad sink target a usageError
// (exit 2).
func cliErr(err error) error {
	if e, ok := errs.As(err); (ok && e.Code == errs.Invalid) || errors.Is(err, sinks.ErrTarget) {
		return usageError{err.Error()}
	}
	return err
}

func runLoadCorpus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := a.flags("load corpus", stderr)
	if err := a.parse(fs, args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := a.openModels(log)
	if err != nil {
		return err
	}
	defer m.Close()
	g, _, err := a.openGraph(ctx, stderr)
	if err != nil {
		return err
	}
	x, _, err := a.openIndex(ctx, g, m.DocEncoder, stderr, true)
	if err != nil {
		return err
	}
	if w, ok := x.(retrieval.Writer); ok {
		n, err := w.Count(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "index ready: %d documents (state %s)\n", n, a.cfg.State)
	}
	return nil
}
