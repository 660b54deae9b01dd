package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
)

func init() {
	register("load neo4j", "load a KG bundle into Neo4j over Bolt, or finish a neo4j-admin CSV import", runLoadNeo4j)
}

// runLoadNeo4j: `dmar load neo4j --bundle DIR` (online, idempotent,
// resumable with --checkpoint) or `dmar load neo4j --after-import` (after
// scripts/services/neo4j.sh import: schema and linking forms).
func runLoadNeo4j(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := neo4jkg.ConfigFromEnv()
	if cfg.URI == "" {
		cfg.URI = "bolt://127.0.0.1:7687"
	}
	fs := flag.NewFlagSet("load neo4j", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: dmar load neo4j --bundle DIR [--wipe] [--checkpoint FILE]\n       dmar load neo4j --after-import")
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.URI, "uri", cfg.URI, "Neo4j Bolt URI (env DMAR_NEO4J_URI)")
	fs.StringVar(&cfg.User, "user", cfg.User, "user when a password is set (env DMAR_NEO4J_USER, default neo4j)")
	dir := fs.String("bundle", "", "KG bundle directory (triples.tsv, entities.jsonl, relations.json), e.g. ../shared/data/codexm")
	after := fs.Bool("after-import", false, "apply migrations and set linking forms after `scripts/services/neo4j.sh import`")
	wipe := fs.Bool("wipe", false, "delete the graph already in the database first")
	ckpt := fs.String("checkpoint", "", "checkpoint file: a rerun after a failure resumes after the committed rows")
	batch := fs.Int("batch", 2000, "rows per transaction")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return usageError{err.Error()}
	}
	if (*dir == "") == !*after {
		return usageError{"load neo4j: give exactly one of --bundle DIR and --after-import"}
	}
	start := time.Now()
	st, err := neo4jkg.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close(context.Background())
	if *wipe {
		if err := st.DeleteGraph(ctx); err != nil {
			return err
		}
	}
	if *after {
		n, err := st.FillNames(ctx, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "load neo4j: linking forms set on %d entities\n", n)
	} else {
		c, err := st.LoadBundle(ctx, *dir, neo4jkg.SinkOptions{Batch: *batch, Checkpoint: *ckpt, Progress: stderr})
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "load neo4j: read %d records: %d loaded, %d duplicates, %d bad %v\n", c.Read, c.Loaded, c.Filtered, c.Bad, c.Problems)
	}
	n, err := st.Counts(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "neo4j %s: %d entities, %d statements, %d documents (%.1fs)\n", cfg.URI, n.Entities, n.Statements, n.Documents, time.Since(start).Seconds())
	return nil
}
