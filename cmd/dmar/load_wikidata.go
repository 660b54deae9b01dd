package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/loaders/sparql"
	"github.com/dmar-kg/dmar/loaders/wikidata"
)

func init() {
	register("load wikidata", "load a Wikidata JSON dump (.json, .json.gz, .json.bz2) into neo4j-admin CSV or a KG bundle", runLoadWikidata)
	register("load sparql", "load the neighbourhood of seed entities from a Wikidata-compatible SPARQL endpoint", runLoadSPARQL)
}

func runLoadWikidata(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("load wikidata", stderr)
	var f wikidata.Flags
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	o, sink, err := f.Open(ctx, stderr, os.Getenv)
	if err != nil {
		return cliErr(err)
	}
	st, err := wikidata.Load(ctx, f.Dump, sink, o)
	if err != nil {
		return fmt.Errorf("load wikidata: %w", err)
	}
	return st.Report(stdout, f.JSON)
}

func runLoadSPARQL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("load sparql", stderr)
	var f sparql.Flags
	f.Register(fs, config.SPARQLEndpoint(os.Getenv))
	if err := fs.Parse(args); err != nil {
		return err
	}
	o, sink, err := f.Open(ctx, stderr, os.Getenv)
	if err != nil {
		return cliErr(err)
	}
	st, err := sparql.Load(ctx, sink, o)
	if err != nil {
		return fmt.Errorf("load sparql: %w", err)
	}
	st.Report(stdout)
	return nil
}
