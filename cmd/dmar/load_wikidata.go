package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
	"github.com/dmar-kg/dmar/loaders/sinks"
	"github.com/dmar-kg/dmar/loaders/sparql"
	"github.com/dmar-kg/dmar/loaders/wikidata"
)

func init() {
	register("load wikidata", "load a Wikidata JSON dump (.json, .json.gz, .json.bz2) into neo4j-admin CSV or a KG bundle", runLoadWikidata)
	register("load sparql", "load the neighbourhood of seed entities from a Wikidata-compatible SPARQL endpoint", runLoadSPARQL)
}

// openSink opens the sink of --to: a Neo4j URL (config.ParseGraph's
// schemes, credentials from DMAR_NEO4J_*), else csv:DIR or bundle:DIR.
func openSink(ctx context.Context, to string) (kg.Sink, error) {
	scheme, _, _ := strings.Cut(to, ":")
	if slices.Contains(config.GraphSchemes, scheme) {
		if _, err := config.ParseGraph(to); err != nil {
			return nil, usageError{"--to " + err.Error()}
		}
		n, ps := config.Neo4jEnv(os.Getenv)
		if err := ps.Err(); err != nil {
			return nil, err
		}
		return sinks.OpenBolt(ctx, neo4jkg.Config{URI: to, User: n.User, Password: n.Password.Reveal(), Database: n.Database})
	}
	s, err := sinks.OpenFile("--to", to)
	if errors.Is(err, sinks.ErrTarget) {
		return nil, usageError{err.Error()}
	}
	return s, err
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func runLoadWikidata(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("load wikidata", stderr)
	dump := fs.String("dump", "", "Wikidata JSON dump: latest-all.json, .json.gz or .json.bz2 (required)")
	to := fs.String("to", "", "where to: csv:DIR (neo4j-admin import files), bundle:DIR (dmar KG bundle) or neo4j://HOST:PORT (online Bolt MERGEs) (required)")
	lang := fs.String("lang", "en", "languages for labels, aliases and descriptions, in order of preference (comma-separated)")
	props := fs.String("properties", "", "only these statement properties (comma-separated PIDs); default all")
	itemsOnly := fs.Bool("items-only", false, "skip property entities too (otherwise they become relation labels)")
	seeds := fs.String("seeds", "", "only the neighbourhood of these QIDs (comma-separated); takes hops+1 passes")
	hops := fs.Int("hops", 1, "neighbourhood radius with --seeds")
	workers := fs.Int("workers", 0, "parsing goroutines (0: all cores)")
	relations := fs.String("relations", "", "PID<TAB>label file for relation labels (default: the shared wikidata-properties file when present; \"none\" for none)")
	decompress := fs.String("decompress", "auto", "gzip/bzip2 reader: go, external (pigz/gzip, lbzip2/bzip2 from PATH in their own process) or auto (external when found)")
	quiet := fs.Bool("quiet", false, "no progress lines")
	asJSON := fs.Bool("json", false, "print the final statistics as one JSON object")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dump == "" || *to == "" {
		return usageError{"load wikidata: --dump and --to are required"}
	}
	o := wikidata.Options{
		Filter:     wikidata.Filter{Languages: splitList(*lang)},
		ItemsOnly:  *itemsOnly,
		Seeds:      splitList(*seeds),
		Workers:    *workers,
		Decompress: *decompress,
		Log:        stderr,
	}
	if len(o.Seeds) > 0 {
		o.Hops = *hops
	}
	if ps := splitList(*props); len(ps) > 0 {
		o.Properties = map[string]bool{}
		for _, p := range ps {
			o.Properties[p] = true
		}
	}
	switch *relations {
	case "none":
	case "":
		// The default file sits in the shared data (DMAR_SHARED_DATA, else
		// ../shared/data above the repository); outside it, say so rather than
		// write a graph whose relations have no labels.
		d, err := datapath.Dataset("wikidata-properties")
		p := filepath.Join(d, "properties_with_labels.tsv")
		if err != nil || !fileExists(p) {
			return usageError{"load wikidata: relation labels file not found (default: the shared wikidata-properties/properties_with_labels.tsv; set DMAR_SHARED_DATA, pass --relations FILE, or --relations none)"}
		}
		o.PropertiesTSV = p
	default:
		o.PropertiesTSV = *relations
	}
	if !*quiet {
		o.Progress = stderr
	}
	sink, err := openSink(ctx, *to)
	if err != nil {
		return err
	}
	st, err := wikidata.Load(ctx, *dump, sink, o)
	if err != nil {
		return fmt.Errorf("load wikidata: %w", err)
	}
	return st.Report(stdout, *asJSON)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func runLoadSPARQL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("load sparql", stderr)
	ep := fs.String("endpoint", config.SPARQLEndpoint(os.Getenv), "SPARQL endpoint URL (default $DMAR_SPARQL_URL)")
	seeds := fs.String("seeds", "", "seed QIDs, comma-separated (required)")
	hops := fs.Int("hops", 1, "neighbourhood radius")
	lang := fs.String("lang", "en", "language of labels, aliases and descriptions")
	props := fs.String("properties", "", "only these properties (comma-separated PIDs)")
	to := fs.String("to", "", "where to: bundle:DIR, csv:DIR or neo4j://HOST:PORT (required)")
	chunk := fs.Int("chunk", 200, "ids per query")
	page := fs.Int("page", 10000, "rows per request")
	timeout := fs.Duration("timeout", 2*time.Minute, "per request")
	quiet := fs.Bool("quiet", false, "no progress lines")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ep == "" || *seeds == "" || *to == "" {
		return usageError{"load sparql: --endpoint (or DMAR_SPARQL_URL), --seeds and --to are required"}
	}
	sink, err := openSink(ctx, *to)
	if err != nil {
		return err
	}
	o := sparql.Options{Endpoint: *ep, Seeds: splitList(*seeds), Hops: *hops, Lang: *lang, Properties: splitList(*props),
		ChunkSize: *chunk, PageSize: *page, Timeout: *timeout}
	if !*quiet {
		o.Progress = stderr
	}
	start := time.Now()
	st, err := sparql.Load(ctx, sink, o)
	if err != nil {
		return fmt.Errorf("load sparql: %w", err)
	}
	sinks.PrintCounts(stdout, st.Counts)
	fmt.Fprintf(stdout, "%d entities, %d triples, %d relations from %d queries in %s\n",
		st.Entities, st.Triples, st.Relations, st.Queries, time.Since(start).Round(time.Millisecond))
	return nil
}
