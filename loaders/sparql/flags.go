package sparql

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/loaders"
	"github.com/dmar-kg/dmar/loaders/sinks"
)

// Flags are dmar load sparql's flags (Register); Options turns them into
// Options.
type Flags struct {
	To string

	endpoint, seeds, lang, props string
	hops, chunk, page            int
	timeout                      time.Duration
	quiet                        bool
}

// Register adds f's flags to fs; endpoint is --endpoint's default.
func (f *Flags) Register(fs *flag.FlagSet, endpoint string) {
	fs.StringVar(&f.endpoint, "endpoint", endpoint, "SPARQL endpoint URL (default $DMAR_SPARQL_URL)")
	fs.StringVar(&f.seeds, "seeds", "", "seed QIDs, comma-separated (required)")
	fs.IntVar(&f.hops, "hops", 1, "neighbourhood radius")
	fs.StringVar(&f.lang, "lang", "en", "language of labels, aliases and descriptions")
	fs.StringVar(&f.props, "properties", "", "only these properties (comma-separated PIDs)")
	fs.StringVar(&f.To, "to", "", "where to: bundle:DIR, csv:DIR or neo4j://HOST:PORT (required)")
	fs.IntVar(&f.chunk, "chunk", 200, "ids per query")
	fs.IntVar(&f.page, "page", 10000, "rows per request")
	fs.DurationVar(&f.timeout, "timeout", 2*time.Minute, "per request")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress lines")
}

// Open is Options, and the sink of --to opened by sinks.Open (credentials
// of a Neo4j from DMAR_NEO4J_* through getenv). A target that names no sink
// is a sinks.ErrTarget.
func (f *Flags) Open(ctx context.Context, progress io.Writer, getenv func(string) string) (Options, kg.Sink, error) {
	o, err := f.Options(progress)
	if err != nil {
		return o, nil, err
	}
	sink, err := sinks.Open(ctx, "--to", f.To, getenv)
	return o, sink, err
}

// Options are the load options f asks for, with progress lines (unless
// --quiet) on progress. A missing endpoint, --seeds or --to is an
// errs.Invalid error.
func (f *Flags) Options(progress io.Writer) (Options, error) {
	if f.endpoint == "" || f.seeds == "" || f.To == "" {
		return Options{}, errs.E(errs.Invalid, "load sparql: --endpoint (or DMAR_SPARQL_URL), --seeds and --to are required")
	}
	o := Options{Endpoint: f.endpoint, Seeds: loaders.SplitList(f.seeds), Hops: f.hops, Lang: f.lang, Properties: loaders.SplitList(f.props),
		ChunkSize: f.chunk, PageSize: f.page, Timeout: f.timeout}
	if !f.quiet {
		o.Progress = progress
	}
	return o, nil
}

// Report writes st as dmar load sparql prints it: the counts, the first
// problems, then the sizes and the time.
func (st Stats) Report(w io.Writer) {
	fmt.Fprintf(w, "read %d, loaded %d, filtered %d, bad %d\n", st.Read, st.Loaded, st.Filtered, st.Bad)
	for _, p := range st.Problems {
		fmt.Fprintln(w, "  bad:", p)
	}
	fmt.Fprintf(w, "%d entities, %d triples, %d relations from %d queries in %s\n",
		st.Entities, st.Triples, st.Relations, st.Queries, st.Elapsed.Round(time.Millisecond))
}
