package wikidata

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/loaders"
	"github.com/dmar-kg/dmar/loaders/sinks"
)

// Flags are dmar load wikidata's flags (Register); Options turns them into
// Options.
type Flags struct {
	Dump, To string
	JSON     bool // print the final statistics as one JSON object

	lang, props, seeds, relations, decompress string
	itemsOnly, quiet, allowTruncated          bool
	hops, workers                             int
}

// Register adds f's flags to fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.StringVar(&f.Dump, "dump", "", "Wikidata JSON dump: latest-all.json, .json.gz or .json.bz2 (required)")
	fs.StringVar(&f.To, "to", "", "where to: csv:DIR (neo4j-admin import files), bundle:DIR (dmar KG bundle) or neo4j://HOST:PORT (online Bolt MERGEs) (required)")
	fs.StringVar(&f.lang, "lang", "en", "languages for labels, aliases and descriptions, in order of preference (comma-separated)")
	fs.StringVar(&f.props, "properties", "", "only these statement properties (comma-separated PIDs); default all")
	fs.BoolVar(&f.itemsOnly, "items-only", false, "skip property entities too (otherwise they become relation labels)")
	fs.StringVar(&f.seeds, "seeds", "", "only the neighbourhood of these QIDs (comma-separated); takes hops+1 passes")
	fs.IntVar(&f.hops, "hops", 1, "neighbourhood radius with --seeds")
	fs.IntVar(&f.workers, "workers", 0, "parsing goroutines (0: all cores)")
	fs.StringVar(&f.relations, "relations", "", "PID<TAB>label file for relation labels (default: the shared wikidata-properties file when present; \"none\" for none)")
	fs.StringVar(&f.decompress, "decompress", "auto", "gzip/bzip2 reader: go, external (pigz/gzip, lbzip2/bzip2 from PATH in their own process) or auto (external when found)")
	fs.BoolVar(&f.allowTruncated, "allow-truncated", false, "load what a cut-off dump holds before the cut (a compressed stream that ends early, no closing ']', a last line cut inside an entity) instead of failing; the statistics name the last complete entity")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress lines")
	fs.BoolVar(&f.JSON, "json", false, "print the final statistics as one JSON object")
}

// Open is Options, and the sink of --to opened by sinks.Open (credentials
// of a Neo4j from DMAR_NEO4J_* through getenv). A target that names no sink
// is a sinks.ErrTarget.
func (f *Flags) Open(ctx context.Context, log io.Writer, getenv func(string) string) (Options, kg.Sink, error) {
	o, err := f.Options(log)
	if err != nil {
		return o, nil, err
	}
	sink, err := sinks.Open(ctx, "--to", f.To, getenv)
	return o, sink, err
}

// Options are the load options f asks for, with bad lines logged to log and
// progress lines (unless --quiet) on it too. A missing --dump or --to, or no
// relation labels file, is an errs.Invalid error.
func (f *Flags) Options(log io.Writer) (Options, error) {
	if f.Dump == "" || f.To == "" {
		return Options{}, errs.E(errs.Invalid, "load wikidata: --dump and --to are required")
	}
	o := Options{
		Filter:         Filter{Languages: loaders.SplitList(f.lang)},
		ItemsOnly:      f.itemsOnly,
		Seeds:          loaders.SplitList(f.seeds),
		Workers:        f.workers,
		Decompress:     f.decompress,
		Log:            log,
		AllowTruncated: f.allowTruncated,
	}
	if len(o.Seeds) > 0 {
		o.Hops = f.hops
	}
	if ps := loaders.SplitList(f.props); len(ps) > 0 {
		o.Properties = map[string]bool{}
		for _, p := range ps {
			o.Properties[p] = true
		}
	}
	switch f.relations {
	case "none":
	case "":
		// The default file sits in the shared data (DMAR_SHARED_DATA, else
		// ../shared/data above the repository); outside it, say so rather than
		// write a graph whose relations have no labels.
		d, err := datapath.Dataset("wikidata-properties")
		p := filepath.Join(d, "properties_with_labels.tsv")
		if _, serr := os.Stat(p); err != nil || serr != nil {
			return Options{}, errs.E(errs.Invalid, "load wikidata: relation labels file not found (default: the shared wikidata-properties/properties_with_labels.tsv; set DMAR_SHARED_DATA, pass --relations FILE, or --relations none)")
		}
		o.PropertiesTSV = p
	default:
		o.PropertiesTSV = f.relations
	}
	if !f.quiet {
		o.Progress = log
	}
	return o, nil
}
