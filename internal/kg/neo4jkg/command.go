package neo4jkg

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
)

// LoadOptions are the settings of dmar load kg against Neo4j.
type LoadOptions struct {
	// AfterImport finishes a neo4j-admin CSV import (schema and linking
	// forms) instead of loading the bundle.
	AfterImport bool
	Wipe        bool // delete the graph already in the database first
	Checkpoint  string
	Batch       int
	Progress    io.Writer // progress lines of the bundle load (nil: none)
}

// RegisterFlags adds o's flags to fs as dmar load kg takes them.
func (o *LoadOptions) RegisterFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.AfterImport, "after-import", false, "Neo4j: apply migrations and set linking forms after `scripts/services/neo4j.sh import` instead of loading the bundle")
	fs.BoolVar(&o.Wipe, "wipe", false, "Neo4j: delete the graph already in the database first")
	fs.StringVar(&o.Checkpoint, "checkpoint", "", "Neo4j: checkpoint file: a rerun after a failure resumes after the committed rows")
	fs.IntVar(&o.Batch, "batch", 2000, "Neo4j: rows per transaction")
}

// Load opens the Neo4j of cfg and loads the KG bundle in dir into it
// (idempotent, resumable with a checkpoint), or with AfterImport finishes a
// neo4j-admin import. The summary goes to stdout, notes and the linking
// forms' progress to stderr.
func Load(ctx context.Context, cfg Config, dir string, o LoadOptions, stdout, stderr io.Writer) error {
	start := time.Now()
	st, err := Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close(context.Background())
	if o.Wipe {
		if err := st.DeleteGraph(ctx); err != nil {
			return err
		}
	}
	if o.AfterImport {
		n, err := st.FillNames(ctx, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "load kg: linking forms set on %d entities\n", n)
		c, err := st.Counts(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "neo4j %s: %d entities, %d statements, %d documents (%.1fs)\n", cfg.URI, c.Entities, c.Statements, c.Documents, time.Since(start).Seconds())
		return nil
	}
	c, err := st.LoadBundle(ctx, dir, SinkOptions{Batch: o.Batch, Checkpoint: o.Checkpoint, Progress: o.Progress})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "load kg: %s into %s: read %d, loaded %d, duplicates %d, skipped as bad %d\n", dir, cfg.URI, c.Read, c.Loaded, c.Filtered, c.Bad)
	for _, p := range c.Problems {
		fmt.Fprintln(stdout, "  skipped:", p)
	}
	return nil
}

// Legacy is what the deprecated dmar load neo4j's own flags said.
type Legacy struct {
	bundle bool
	User   string // --user: the Neo4j user ("": as configured)
}

// RegisterLegacyFlags adds dmar load neo4j's old flags to fs: --uri sets
// fs's --graph (default uri), --bundle its --kg, and --user is kept in the
// result.
func RegisterLegacyFlags(fs *flag.FlagSet, uri string) (*Legacy, error) {
	l := &Legacy{}
	fs.Func("uri", "deprecated: --graph", func(v string) error { return fs.Set("graph", v) })
	fs.Func("bundle", "deprecated: --kg", func(v string) error { l.bundle = true; return fs.Set("kg", v) })
	fs.StringVar(&l.User, "user", "", "deprecated: DMAR_NEO4J_USER")
	return l, fs.Set("graph", uri)
}

// Check reports, as an errs.Invalid error, a dmar load neo4j that names
// neither or both of a bundle and an import to finish, or a graph that is
// not Neo4j.
func (l *Legacy) Check(o LoadOptions, neo4j bool) error {
	if l.bundle == o.AfterImport {
		return errs.E(errs.Invalid, "load neo4j: give exactly one of --bundle DIR and --after-import")
	}
	if !neo4j {
		return errs.E(errs.Invalid, "load neo4j: --uri must be a neo4j:// or bolt:// URL")
	}
	return nil
}

// CheckTarget reports, as an errs.Invalid error, Neo4j's own options given
// to a dmar load kg whose bundle goes elsewhere: to files (to, its --to) or
// to the embedded graph (neo4j false).
func (o LoadOptions) CheckTarget(to string, neo4j bool) error {
	switch {
	case !o.AfterImport && !o.Wipe && o.Checkpoint == "":
		return nil
	case to != "":
		return errs.E(errs.Invalid, "load kg: --to writes files; --after-import, --wipe and --checkpoint are for a Neo4j --graph")
	case !neo4j:
		return errs.E(errs.Invalid, "load kg: --after-import, --wipe and --checkpoint need --graph neo4j://HOST:PORT (or bolt://)")
	}
	return nil
}
