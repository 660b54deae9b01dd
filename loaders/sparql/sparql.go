// Package sparql loads the neighbourhood of seed entities from a
// Wikidata-compatible SPARQL endpoint (query.wikidata.org, or Virtuoso
// loaded with the same RDF) into a kg.Sink.
//
// The neighbourhood is the one the dump loader computes: the items within
// Hops of a seed over wdt: statements between items, in either direction,
// and every such statement between two of them (the induced subgraph). It is
// found level by level: out- and in-edges of each frontier, then the
// out-edges of the last level to close the subgraph. Labels, aliases and
// descriptions (rdfs:label, skos:altLabel, schema:description) come in one
// language. Queries are knakk/sparql Bank templates (queries.rq) filled only
// with values that passed strict QID/PID/language checks, in chunks of
// ChunkSize ids and pages of PageSize rows.
package sparql

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/knakk/rdf"
	ksparql "github.com/knakk/sparql"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/progress"
)

//go:embed queries.rq
var queriesText string

var bank = ksparql.LoadBank(strings.NewReader(queriesText))

func init() {
	for _, k := range []string{"out-edges", "in-edges", "labels"} {
		if _, ok := bank[k]; !ok {
			panic("sparql: queries.rq lacks query " + k)
		}
	}
}

const (
	entityNS = "http://www.wikidata.org/entity/"
	directNS = "http://www.wikidata.org/prop/direct/"
)

var langRe = regexp.MustCompile(`^[a-z]{2,8}(-[a-zA-Z0-9]{1,8})*$`)

// Options configures Load.
type Options struct {
	Endpoint   string   // e.g. http://127.0.0.1:8890/sparql
	Seeds      []string // QIDs
	Hops       int
	Lang       string        // labels' language; "" means "en"
	Properties []string      // optional allow-list of PIDs
	ChunkSize  int           // ids per VALUES block; 0 means 200
	PageSize   int           // rows per request; 0 means 10000
	Timeout    time.Duration // per request; 0 means 2 minutes
	Progress   io.Writer
}

// Stats is what a load did. Counts are over result rows: Loaded rows became
// a triple, label, alias or description; Filtered rows were outside the
// neighbourhood or repeated; Bad rows named something that is not an item
// or property.
type Stats struct {
	kg.Counts
	Entities  int `json:"entities"`
	Triples   int `json:"triples"`
	Relations int `json:"relations"`
	Queries   int `json:"queries"`
	// Elapsed is the load's time, the sink's closing included.
	Elapsed time.Duration `json:"elapsed"`
}

func (st *Stats) bad(format string, args ...any) {
	st.Bad++
	if len(st.Problems) < 10 {
		st.Problems = append(st.Problems, fmt.Sprintf(format, args...))
	}
}

func (o *Options) validate() error {
	if o.Endpoint == "" {
		return fmt.Errorf("sparql: no endpoint")
	}
	if u, err := url.Parse(o.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("sparql: endpoint %q is not an http(s) URL", o.Endpoint)
	}
	if len(o.Seeds) == 0 {
		return fmt.Errorf("sparql: no seeds")
	}
	for _, q := range o.Seeds {
		if !kg.ValidQID(q) {
			return fmt.Errorf("sparql: seed %q is not a QID", q)
		}
	}
	for _, p := range o.Properties {
		if !kg.ValidPID(p) {
			return fmt.Errorf("sparql: property %q is not a PID", p)
		}
	}
	if o.Lang == "" {
		o.Lang = "en"
	}
	if !langRe.MatchString(o.Lang) {
		return fmt.Errorf("sparql: language %q is not a language tag", o.Lang)
	}
	if o.Hops < 0 {
		return fmt.Errorf("sparql: hops %d is negative", o.Hops)
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = 200
	}
	if o.PageSize <= 0 {
		o.PageSize = 10000
	}
	return nil
}

// loader holds one run's state.
type loader struct {
	o    Options
	repo *ksparql.Repo
	ctx  context.Context
	st   *Stats
	prog *progress.Meter
}

// ctxCall makes knakk/sparql's requests honour ctx (its Repo.Query takes none).
type ctxCall struct {
	ctx   context.Context
	query string
}

func (c ctxCall) GenRequest(endpoint string) (*http.Request, error) {
	form := url.Values{"query": {c.query}}.Encode()
	req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, endpoint, bytes.NewBufferString(form))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/sparql-results+json")
	return req, nil
}

type params struct {
	QIDs, IDs, PIDs []string
	Lang            string
	Limit, Offset   int
}

// query runs a Bank query over ids in chunks and pages, calling row for each
// solution.
func (l *loader) query(name string, ids []string, row func(map[string]rdf.Term)) error {
	for start := 0; start < len(ids); start += l.o.ChunkSize {
		chunk := ids[start:min(start+l.o.ChunkSize, len(ids))]
		for offset := 0; ; offset += l.o.PageSize {
			p := params{QIDs: chunk, IDs: chunk, PIDs: l.o.Properties, Lang: l.o.Lang, Limit: l.o.PageSize, Offset: offset}
			q, err := bank.Prepare(name, p)
			if err != nil {
				return fmt.Errorf("sparql: prepare %s: %w", name, err)
			}
			qctx, cancel := context.WithTimeout(l.ctx, l.o.Timeout)
			res, err := l.repo.Query(ctxCall{qctx, q})
			cancel()
			l.st.Queries++
			if err != nil {
				if cerr := l.ctx.Err(); cerr != nil {
					return cerr
				}
				return fmt.Errorf("sparql: %s query: %w", name, err)
			}
			sols := res.Solutions()
			for _, s := range sols {
				l.st.Read++
				row(s)
			}
			l.prog.Add(len(sols))
			if len(sols) < l.o.PageSize {
				break
			}
		}
	}
	return nil
}

// id strips namespace ns from an IRI term and checks the rest with valid.
func id(t rdf.Term, ns string, valid func(string) bool) (string, bool) {
	if t == nil || t.Type() != rdf.TermIRI {
		return "", false
	}
	s, ok := strings.CutPrefix(t.String(), ns)
	return s, ok && valid(s)
}

// Load fetches the neighbourhood and writes it to sink, which it closes; a
// failed load aborts a sink that can be aborted (kg.Finish), so it never
// replaces the output of a good run.
func Load(ctx context.Context, sink kg.Sink, o Options) (st Stats, err error) {
	start := time.Now()
	defer func() {
		if ferr := kg.Finish(ctx, sink, err); ferr != nil && err == nil {
			err = fmt.Errorf("sparql: %w", ferr)
		}
		st.Elapsed = time.Since(start)
	}()
	if err := o.validate(); err != nil {
		return st, err
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	// No options: knakk's Timeout option would change http.DefaultClient for
	// the whole process. Each request carries a context with o.Timeout.
	repo, err := ksparql.NewRepo(o.Endpoint)
	if err != nil {
		return st, err
	}
	l := &loader{o: o, repo: repo, ctx: ctx, st: &st, prog: progress.New(o.Progress, "load sparql", "rows", 0)}
	defer l.prog.Done()
	n, err := l.walk()
	if err != nil {
		return st, err
	}
	triples, pids := n.closed(&st)
	nodes := sortedKeys(n.in)
	d, err := l.describe(nodes, pids)
	if err != nil {
		return st, err
	}
	err = d.write(ctx, sink, &st, nodes, triples)
	return st, err
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func term(t rdf.Term) string {
	if t == nil {
		return ""
	}
	return t.String()
}

// dedupe trims aliases, drops the label and repeats, and sorts them: RDF has
// no order.
func dedupe(label string, as []string) []string {
	seen := map[string]bool{label: true}
	var out []string
	for _, a := range as {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}

// sortedKeys returns the keys in QID/PID numeric order.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := strconv.Atoi(out[i][1:])
		b, _ := strconv.Atoi(out[j][1:])
		if a != b {
			return a < b
		}
		return out[i] < out[j]
	})
	return out
}
