package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
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
	var to string
	if _, err := a.parseArgs("load kg", args, stderr, l.RegisterFlags, func(fs *flag.FlagSet) {
		fs.StringVar(&to, "to", "", "write the bundle, streamed, to csv:DIR (files for `scripts/services/neo4j.sh import`) or bundle:DIR instead of loading it into the graph backend")
	}); err != nil {
		return err
	}
	neo4j := !a.cfg.GraphBackend().Embedded()
	if err := l.CheckTarget(to, neo4j); err != nil {
		return cliErr(err)
	}
	switch {
	case to != "":
		sink, err := sinks.OpenFile("--to", to)
		if err != nil {
			return cliErr(err)
		}
		return sinks.StreamBundle(ctx, a.cfg.BundleDir(), to, sink, stdout)
	case neo4j:
		l.Progress = backends.Progress(a.cfg, stderr)
		return neo4jkg.Load(ctx, backends.Neo4j(a.cfg), a.cfg.BundleDir(), l, stdout, stderr)
	}
	return backends.LoadGraph(ctx, a.cfg, stdout)
}

// runLoadNeo4j is the deprecated dmar load neo4j: load kg, with its old
// flags --uri (now --graph; default $DMAR_NEO4J_URI, else
// bolt://127.0.0.1:7687), --bundle (now --kg) and --user (now
// DMAR_NEO4J_USER) still accepted.
func runLoadNeo4j(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fmt.Fprintln(stderr, "dmar: note: `dmar load neo4j` is deprecated; use `dmar load kg --graph bolt://HOST:PORT` (--kg DIR, --after-import, --checkpoint FILE)")
	var a appFlags
	var l neo4jkg.LoadOptions
	fs := a.flags("load neo4j", stderr, l.RegisterFlags)
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
	l.Progress = backends.Progress(a.cfg, stderr)
	return neo4jkg.Load(ctx, backends.Neo4j(a.cfg), a.cfg.BundleDir(), l, stdout, stderr)
}

func runLoadCorpus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	if _, err := a.parseArgs("load corpus", args, stderr); err != nil {
		return err
	}
	return backends.LoadCorpus(ctx, a.cfg, stdout, stderr, warnLogger(stderr))
}
