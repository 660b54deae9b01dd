package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
	"github.com/dmar-kg/dmar/loaders/bundlesink"
	"github.com/dmar-kg/dmar/loaders/neo4jcsv"
	"github.com/dmar-kg/dmar/loaders/sparql"
	"github.com/dmar-kg/dmar/loaders/wikidata"
)

func init() {
	register("load wikidata", "load a Wikidata JSON dump (.json, .json.gz, .json.bz2) into neo4j-admin CSV or a KG bundle", runLoadWikidata)
	register("load sparql", "load the neighbourhood of seed entities from a Wikidata-compatible SPARQL endpoint", runLoadSPARQL)
}

// sinkOpeners maps the scheme of --to (csv:DIR, bundle:DIR, neo4j://…,
// bolt://…) to a sink: the one place a sink is chosen.
var sinkOpeners = map[string]func(ctx context.Context, target string) (kg.Sink, error){
	"csv": func(_ context.Context, dir string) (kg.Sink, error) {
		// Both loaders hand each triple over once, so no dedup set is needed.
		return neo4jcsv.New(dir, neo4jcsv.Options{UniqueTriples: true})
	},
	"bundle": func(_ context.Context, dir string) (kg.Sink, error) {
		return bundlesink.New(dir), nil
	},
	"neo4j": openBolt,
	"bolt":  openBolt,
}

// boltSink is neo4jkg's Bolt loader plus the connection it owns.
type boltSink struct {
	*neo4jkg.Sink
	store *neo4jkg.Store
}

func (b boltSink) Close(ctx context.Context) error {
	err := b.Sink.Close(ctx)
	return errors.Join(err, b.store.Close(context.Background()))
}

// openBolt loads online into the Neo4j at uri (user and password from
// DMAR_NEO4J_USER/DMAR_NEO4J_PASSWORD) in batches of MERGEs; for a full dump
// use csv:DIR and neo4j-admin import instead.
func openBolt(ctx context.Context, uri string) (kg.Sink, error) {
	cfg := neo4jkg.ConfigFromEnv()
	cfg.URI = uri
	st, err := neo4jkg.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s, err := st.NewSink(neo4jkg.SinkOptions{})
	if err != nil {
		st.Close(context.Background())
		return nil, err
	}
	return boltSink{Sink: s, store: st}, nil
}

func openSink(ctx context.Context, to string) (kg.Sink, error) {
	scheme, rest, ok := strings.Cut(to, ":")
	if !ok || rest == "" {
		return nil, usageError{fmt.Sprintf("--to %q: want csv:DIR, bundle:DIR or neo4j://HOST:PORT", to)}
	}
	open, found := sinkOpeners[scheme]
	if !found {
		return nil, usageError{fmt.Sprintf("--to %q: unknown sink %q (csv:DIR, bundle:DIR, neo4j://HOST:PORT)", to, scheme)}
	}
	target := rest
	if scheme == "neo4j" || scheme == "bolt" {
		target = to // the full URI
	}
	return open(ctx, target)
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

func printCounts(w io.Writer, c kg.Counts) {
	fmt.Fprintf(w, "read %d, loaded %d, filtered %d, bad %d\n", c.Read, c.Loaded, c.Filtered, c.Bad)
	for _, p := range c.Problems {
		fmt.Fprintln(w, "  bad:", p)
	}
}

func runLoadWikidata(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load wikidata", flag.ContinueOnError)
	fs.SetOutput(stderr)
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
		if d, err := datapath.Dataset("wikidata-properties"); err == nil {
			if p := filepath.Join(d, "properties_with_labels.tsv"); fileExists(p) {
				o.PropertiesTSV = p
			}
		}
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
	if *asJSON {
		return json.NewEncoder(stdout).Encode(struct {
			wikidata.Stats
			MBPerSec       float64 `json:"mb_per_s"`
			EntitiesPerSec float64 `json:"entities_per_s"`
		}{st, float64(st.Bytes) / 1e6 / st.Elapsed.Seconds(), float64(st.Read) / st.Elapsed.Seconds()})
	}
	printCounts(stdout, st.Counts)
	fmt.Fprintf(stdout, "%d triples, %d relations, %.1f MB in %s (%d passes): %.1f MB/s, %.0f entities/s\n",
		st.Triples, st.Relations, float64(st.Bytes)/1e6, st.Elapsed.Round(time.Millisecond), st.Passes,
		float64(st.Bytes)/1e6/st.Elapsed.Seconds(), float64(st.Read)/st.Elapsed.Seconds())
	if st.Truncated {
		fmt.Fprintln(stdout, "note: the compressed stream was cut off; everything before the cut was loaded", st.TruncatedBy)
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func runLoadSPARQL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load sparql", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ep := fs.String("endpoint", os.Getenv("DMAR_SPARQL_URL"), "SPARQL endpoint URL (default $DMAR_SPARQL_URL)")
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
	printCounts(stdout, st.Counts)
	fmt.Fprintf(stdout, "%d entities, %d triples, %d relations from %d queries in %s\n",
		st.Entities, st.Triples, st.Relations, st.Queries, time.Since(start).Round(time.Millisecond))
	return nil
}
