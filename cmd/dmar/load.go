package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
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
	to := fs.String("to", "", "write the bundle, streamed, to csv:DIR (files for `scripts/services/neo4j.sh import`) or bundle:DIR instead of loading it into the graph backend")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if *to != "" {
		if l.AfterImport || l.Wipe || l.Checkpoint != "" {
			return usageError{"load kg: --to writes files; --after-import, --wipe and --checkpoint are for a Neo4j --graph"}
		}
		return loadKGTo(ctx, a.cfg.BundleDir(), *to, stdout)
	}
	if !a.cfg.GraphBackend().Embedded() {
		l.Progress = a.progressOut(stderr)
		return neo4jkg.Load(ctx, backends.Neo4j(a.cfg), a.cfg.BundleDir(), l, stdout, stderr)
	}
	if l.AfterImport || l.Wipe || l.Checkpoint != "" {
		return usageError{"load kg: --after-import, --wipe and --checkpoint need --graph neo4j://HOST:PORT (or bolt://)"}
	}
	g, _, err := backends.OpenGraph(ctx, a.cfg, stdout)
	if err != nil {
		return err
	}
	if s, ok := g.Graph.(interface{ Stats() (int, int, int) }); ok {
		e, t, r := s.Stats()
		fmt.Fprintf(stdout, "graph ready: %d entities, %d triples, %d relations (state %s)\n", e, t, r, a.cfg.State)
	}
	return nil
}

// loadKGTo streams the bundle in dir into the file sink of target: a large
// bundle never has to fit in memory on its way to neo4j-admin import.
func loadKGTo(ctx context.Context, dir, target string, stdout io.Writer) error {
	sink, err := sinks.OpenFile("--to", target)
	if err != nil {
		return cliErr(err)
	}
	start := time.Now()
	st, err := bundle.Stream(ctx, dir, sink, 0)
	if err := kg.Finish(ctx, sink, err); err != nil {
		return fmt.Errorf("load kg --to %s: %w", target, err)
	}
	fmt.Fprintf(stdout, "load kg: %s to %s: entities read %d, loaded %d, duplicates %d, bad %d; triples read %d, loaded %d, duplicates %d, bad %d (%.1fs)\n",
		dir, target, st.EntitiesRead, st.EntitiesLoaded, st.EntitiesDuplicate, st.EntitiesBad,
		st.TriplesRead, st.TriplesLoaded, st.TriplesDuplicate, st.TriplesBad, time.Since(start).Seconds())
	for _, p := range st.Problems {
		fmt.Fprintln(stdout, "  skipped:", p)
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
	return neo4jkg.Load(ctx, backends.Neo4j(a.cfg), a.cfg.BundleDir(), l, stdout, stderr)
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
	log := warnLogger(stderr)
	m, err := backends.OpenModels(a.cfg, log)
	if err != nil {
		return err
	}
	defer m.Close()
	g, _, err := backends.OpenGraph(ctx, a.cfg, stderr)
	if err != nil {
		return err
	}
	x, _, err := backends.OpenIndex(ctx, a.cfg, g, m.DocEncoder, stderr, true)
	if err != nil {
		return err
	}
	if err := backends.LoadTextGraph(ctx, a.cfg, g, x, m.DocEncoder, stderr); err != nil {
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
