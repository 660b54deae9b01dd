package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
)

func init() {
	register("load kg", "load a KG bundle (triples.tsv, entities.jsonl, relations.json) into the graph backend, or finish a neo4j-admin CSV import (--after-import)", runLoadKG)
	register("load corpus", "link and embed a JSONL corpus and load it into the search backend", runLoadCorpus)
	register("load neo4j", "deprecated: dmar load kg --graph bolt://HOST:PORT (same flags; --uri and --bundle still work)", runLoadNeo4j)
}

// loadKGFlags are load kg's own flags (Neo4j only).
type loadKGFlags struct {
	after, wipe bool
	checkpoint  string
	batch       int
}

func (l *loadKGFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&l.after, "after-import", false, "Neo4j: apply migrations and set linking forms after `scripts/services/neo4j.sh import` instead of loading the bundle")
	fs.BoolVar(&l.wipe, "wipe", false, "Neo4j: delete the graph already in the database first")
	fs.StringVar(&l.checkpoint, "checkpoint", "", "Neo4j: checkpoint file: a rerun after a failure resumes after the committed rows")
	fs.IntVar(&l.batch, "batch", 2000, "Neo4j: rows per transaction")
}

func runLoadKG(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var l loadKGFlags
	fs := a.flags("load kg", stderr)
	l.register(fs)
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if !a.cfg.GraphBackend().Embedded() {
		return loadBundleIntoNeo4j(ctx, &a, l, stdout, stderr)
	}
	if l.after || l.wipe || l.checkpoint != "" {
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

// loadBundleIntoNeo4j loads the bundle online over Bolt (idempotent,
// resumable with a checkpoint), or with --after-import finishes a
// neo4j-admin import (schema and linking forms).
func loadBundleIntoNeo4j(ctx context.Context, a *appFlags, l loadKGFlags, stdout, stderr io.Writer) error {
	start := time.Now()
	st, err := neo4jkg.Open(ctx, a.neo4jConfig())
	if err != nil {
		return err
	}
	defer st.Close(context.Background())
	if l.wipe {
		if err := st.DeleteGraph(ctx); err != nil {
			return err
		}
	}
	if l.after {
		n, err := st.FillNames(ctx, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "load kg: linking forms set on %d entities\n", n)
		c, err := st.Counts(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "neo4j %s: %d entities, %d statements, %d documents (%.1fs)\n", a.cfg.Graph, c.Entities, c.Statements, c.Documents, time.Since(start).Seconds())
		return nil
	}
	c, err := st.LoadBundle(ctx, a.cfg.BundleDir(), neo4jkg.SinkOptions{Batch: l.batch, Checkpoint: l.checkpoint, Progress: a.progressOut(stderr)})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "load kg: %s into %s: read %d, loaded %d, duplicates %d, skipped as bad %d\n", a.cfg.BundleDir(), a.cfg.Graph, c.Read, c.Loaded, c.Filtered, c.Bad)
	for _, p := range c.Problems {
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
	var l loadKGFlags
	fs := a.flags("load neo4j", stderr)
	l.register(fs)
	if err := fs.Set("graph", config.LegacyNeo4jURI(os.Getenv)); err != nil {
		return err
	}
	bundle, user := false, ""
	fs.Func("uri", "deprecated: --graph", func(v string) error { return fs.Set("graph", v) })
	fs.Func("bundle", "deprecated: --kg", func(v string) error { bundle = true; return fs.Set("kg", v) })
	fs.StringVar(&user, "user", "", "deprecated: DMAR_NEO4J_USER")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if bundle == l.after {
		return usageError{"load neo4j: give exactly one of --bundle DIR and --after-import"}
	}
	if a.cfg.GraphBackend().Embedded() {
		return usageError{"load neo4j: --uri must be a neo4j:// or bolt:// URL"}
	}
	if user != "" {
		a.cfg.Neo4j.User = user
	}
	return loadBundleIntoNeo4j(ctx, &a, l, stdout, stderr)
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
	if w, ok := x.(interface {
		Count(context.Context) (int, error)
	}); ok {
		n, err := w.Count(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "index ready: %d documents (state %s)\n", n, a.cfg.State)
	}
	return nil
}
