package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
)

func init() {
	register("load kg", "load a KG bundle (triples.tsv, entities.jsonl, relations.json) into the graph backend", runLoadKG)
	register("load corpus", "link and embed a JSONL corpus and load it into the search backend", runLoadCorpus)
}

func runLoadKG(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := flag.NewFlagSet("load kg", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a.register(fs)
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if strings.HasPrefix(a.graph, "neo4j://") || strings.HasPrefix(a.graph, "bolt://") {
		return loadBundleIntoNeo4j(ctx, a, stdout, stderr)
	}
	g, _, err := a.openGraph(ctx, stdout)
	if err != nil {
		return err
	}
	if s, ok := g.graph.(interface{ Stats() (int, int, int) }); ok {
		e, t, r := s.Stats()
		fmt.Fprintf(stdout, "graph ready: %d entities, %d triples, %d relations (state %s)\n", e, t, r, a.state)
	}
	return nil
}

func runLoadCorpus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := flag.NewFlagSet("load corpus", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a.register(fs)
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
	x, _, err := a.openIndex(ctx, g, m.docEnc, stderr, true)
	if err != nil {
		return err
	}
	if w, ok := x.(interface {
		Count(context.Context) (int, error)
	}); ok {
		n, err := w.Count(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "index ready: %d documents (state %s)\n", n, a.state)
	}
	return nil
}

// loadBundleIntoNeo4j loads the bundle online over Bolt (idempotent).
func loadBundleIntoNeo4j(ctx context.Context, a appFlags, stdout, stderr io.Writer) error {
	// Credentials from the configuration (environment or secret files).
	cfg := neo4jkg.Config{URI: a.graph, User: a.cfg.Neo4j.User, Password: a.cfg.Neo4j.Password.Reveal(), Database: a.cfg.Neo4j.Database}
	st, err := neo4jkg.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close(context.Background())
	c, err := st.LoadBundle(ctx, a.bundleDir(), neo4jkg.SinkOptions{Progress: a.progressOut(stderr)})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "load kg: %s into %s: read %d, loaded %d, duplicates %d, skipped as bad %d\n", a.bundleDir(), a.graph, c.Read, c.Loaded, c.Filtered, c.Bad)
	for _, p := range c.Problems {
		fmt.Fprintln(stdout, "  skipped:", p)
	}
	return nil
}
