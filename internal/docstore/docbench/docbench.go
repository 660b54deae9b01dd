// Package docbench measures live documents (dmar bench docs): upsert
// throughput beside the load path (corpus.Prepare and an index Put, what
// dmar load corpus does) on the same documents; search latency alone and
// while a writer upserts; a restart after a few documents of a corpus
// changed beside a cold build; and what the store costs on disk.
package docbench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/cpuprofile"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/state"
	"github.com/dmar-kg/dmar/internal/stats"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Bench is one run.
type Bench struct {
	Graph   kg.Graph
	KGKey   string
	Encoder scoring.Encoder      // the document encoder
	Docs    []retrieval.Document // raw documents for the throughput part
	Batch   int
	// Search is the index searched (a loaded corpus); Queries its texts.
	Search  *memindex.Index
	Queries []string
	// SearchTime is how long each p50 is measured.
	SearchTime time.Duration
	// Restart, when set, is the corpus whose restart is timed after
	// Changed of its documents change; SeedFrom is a state folder whose
	// snapshots are linked into a fresh one first.
	Restart  *state.Inputs
	SeedFrom string
	Changed  int
	Dir      string // scratch folder
	// WriteEncoder, when set, is what live documents are embedded with in
	// production (onnx.Background: threads of low priority); the store's
	// writes are then measured with it and, side by side, with Encoder.
	WriteEncoder scoring.Encoder
	WriteLabel   string // how WriteEncoder runs, for the table (e.g. "nice 19")
	// CPUProfile, when set, is a path prefix: the CPU profile of each slice
	// of the search measure goes to PREFIX-phaseK-roundR.pprof (phase 0
	// alone, then the writers in the order printed).
	CPUProfile string
	// IndexOnly measures only searches alone and under the index-only
	// writers (no throughput, no store writers, no restart).
	IndexOnly bool
}

// Run runs every part and prints the table to w.
func (b Bench) Run(ctx context.Context, w, progress io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "measure\tbaseline\tlive documents\tlive/baseline\n")
	say := func(format string, args ...any) { fmt.Fprintf(progress, "bench docs: "+format+"\n", args...) }

	n := float64(len(b.Docs))
	var t throughputResult
	if !b.IndexOnly {
		say("throughput over %d documents, batches of %d", len(b.Docs), b.Batch)
		var err error
		if t, err = b.throughput(ctx); err != nil {
			return err
		}
		b.printThroughput(tw, t)
	}

	say("search p50 over %d documents, %s alone and %s under each writer, interleaved", b.countSearch(ctx), b.SearchTime, b.SearchTime)
	phases, err := b.searchUnderWrites(ctx)
	if err != nil {
		return err
	}
	alone := phases[0]
	fmt.Fprintf(tw, "hybrid search p50 ms, %s, no writer\t%.3f\t\t\n", b.SearchTime, alone.p50)
	for _, p := range phases[1:] {
		fmt.Fprintf(tw, "hybrid search p50 ms, %s (alone | %s, %d documents written meanwhile)\t%.3f\t%.3f\t%.2fx\n",
			b.SearchTime, p.name, p.written, alone.p50, p.p50, p.p50/alone.p50)
	}
	if b.IndexOnly {
		return tw.Flush()
	}

	if b.Restart != nil {
		say("restart after %d changed documents of %s", b.Changed, b.Restart.Corpus)
		r, err := b.restart(ctx, progress)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "restart s, %d of %d documents changed (cold build, estimated from %d documents | cache)\t%.1f\t%.1f\t%.4fx\n",
			b.Changed, r.docs, r.sample, r.cold.Seconds(), r.restart.Seconds(), r.restart.Seconds()/r.cold.Seconds())
		fmt.Fprintf(tw, "documents embedded by the restart\t%d\t%d\t\n", r.docs, r.embedded)
		fmt.Fprintf(tw, "cache bytes per document (vectors and links)\t\t%.0f\t\n", float64(r.cacheBytes)/float64(r.docs))
	}
	fmt.Fprintf(tw, "document log bytes per document (text, links, vector, framing)\t\t%.0f\t\n", float64(t.logBytes)/n)
	return tw.Flush()
}

// printThroughput prints the throughput rows.
func (b Bench) printThroughput(tw io.Writer, t throughputResult) {
	n := float64(len(b.Docs))
	rate := func(d time.Duration) float64 { return 2 * n / d.Seconds() }
	fmt.Fprintf(tw, "docs/s, %d documents twice, ABBA order (load corpus path | PUT batches of %d, fsynced%s)\t%.2f\t%.2f\t%.2fx\n",
		len(b.Docs), b.Batch, b.writeLabel(", "), rate(t.load), rate(t.put), t.load.Seconds()/t.put.Seconds())
	if b.WriteEncoder != nil {
		fmt.Fprintf(tw, "docs/s, the same (load corpus path | PUT batches of %d, fsynced, the encoder at normal priority: the change off)\t%.2f\t%.2f\t%.2fx\n",
			b.Batch, rate(t.load), rate(t.putNormal), t.load.Seconds()/t.putNormal.Seconds())
	}
}

// throughputResult is the time of two passes over the documents each.
type throughputResult struct {
	load, put, putNormal time.Duration
	logBytes             int64 // one PUT log's size
}

// throughput times the load path and PUT batches on the same documents,
// each into a fresh index, twice each in a mirrored order (load, PUT, PUT,
// load; with a write encoder load, PUT, PUT at normal priority and back)
// so that drift of a shared machine falls on every side.
func (b Bench) throughput(ctx context.Context) (throughputResult, error) {
	var r throughputResult
	// Warm the encoders once so that no side pays its first call.
	for _, e := range []scoring.Encoder{b.Encoder, b.WriteEncoder} {
		if e == nil {
			continue
		}
		if _, err := e.Encode(ctx, []string{"warm up"}); err != nil {
			return r, err
		}
	}
	const load, put, putNormal = 0, 1, 2
	order := []int{load, put, put, load}
	if b.WriteEncoder != nil {
		order = []int{load, put, putNormal, putNormal, put, load}
	}
	for round, side := range order {
		var d time.Duration
		var err error
		switch side {
		case load:
			d, err = b.loadAll(ctx)
			r.load += d
		case put:
			d, r.logBytes, err = b.putAll(ctx, filepath.Join(b.Dir, fmt.Sprintf("throughput-%d", round)), b.writeEncoder())
			r.put += d
		case putNormal:
			d, _, err = b.putAll(ctx, filepath.Join(b.Dir, fmt.Sprintf("throughput-%d", round)), b.Encoder)
			r.putNormal += d
		}
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

// writeLabel names the write encoder after prefix, "" without one.
func (b Bench) writeLabel(prefix string) string {
	if b.WriteEncoder == nil {
		return ""
	}
	if b.WriteLabel != "" {
		return prefix + "low-priority write encoder (" + b.WriteLabel + ")"
	}
	return prefix + "low-priority write encoder"
}

// writeEncoder is what the store embeds with: WriteEncoder when set.
func (b Bench) writeEncoder() scoring.Encoder {
	if b.WriteEncoder != nil {
		return b.WriteEncoder
	}
	return b.Encoder
}

// loadAll is what dmar load corpus does with the documents: link and
// embed them in batches, then put them into the index.
func (b Bench) loadAll(ctx context.Context) (time.Duration, error) {
	docs := fresh(b.Docs)
	start := time.Now()
	if err := corpus.Prepare(ctx, b.Graph, b.Encoder, docs, corpus.Options{}); err != nil {
		return 0, err
	}
	if err := memindex.New(memindex.DefaultParams()).Put(ctx, docs); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// putAll writes the documents through a fresh store embedding with enc,
// in batches.
func (b Bench) putAll(ctx context.Context, dir string, enc scoring.Encoder) (time.Duration, int64, error) {
	s, err := docstore.Open(ctx, docstore.Config{Dir: dir, Index: memindex.New(memindex.DefaultParams()), Graph: b.Graph, KGKey: b.KGKey,
		Encoder: enc, Replay: true, Logger: quiet})
	if err != nil {
		return 0, 0, err
	}
	defer s.Close()
	start := time.Now()
	for i := 0; i < len(b.Docs); i += b.Batch {
		part := b.Docs[i:min(i+b.Batch, len(b.Docs))]
		in := make([]docstore.Input, len(part))
		for j, d := range part {
			in[j] = docstore.Input{ID: d.ID, Title: d.Title, Text: d.Text}
		}
		res, err := s.Put(ctx, in)
		if err != nil {
			return 0, 0, err
		}
		if len(res.Rejected) > 0 {
			return 0, 0, fmt.Errorf("document %q rejected: %s", res.Rejected[0].ID, res.Rejected[0].Reason)
		}
	}
	return time.Since(start), s.LogBytes(), nil
}

func (b Bench) countSearch(ctx context.Context) int { n, _ := b.Search.Count(ctx); return n }

// phase is one condition of the search measure: its searches' latencies
// over all its slices, and the documents its writer wrote.
type phase struct {
	name    string
	write   func(ctx context.Context) (int, error) // one batch; nil: no writer
	ms      []float64
	written int64
	p50     float64
	sharing *memindex.Sharing // what the index's writes share meanwhile; nil: all (the default)
}

// sliceTime is how long each phase is measured at a time: the phases take
// turns, in a mirrored order, so that the load of a shared machine, which
// changes over seconds, falls on all of them alike.
const sliceTime = time.Second

// searchUnderWrites gives hybrid search's p50 (ms) alone and while each
// writer upserts changed copies of the index's documents: through a store
// embedding with Encoder (at normal priority), through one embedding with
// WriteEncoder (when set), and straight into the index with their vectors
// kept (no model calls: the index's own write cost).
func (b Bench) searchUnderWrites(ctx context.Context) ([]*phase, error) {
	vecs, err := b.Encoder.Encode(ctx, b.Queries)
	if err != nil {
		return nil, err
	}
	all := b.Search.All()
	src := &revisions{base: all[:min(len(all), 512)]}
	var stores []*docstore.Store
	defer func() {
		for _, s := range stores {
			s.Close()
		}
	}()
	phases, err := b.writerPhases(ctx, src, &stores)
	if err != nil {
		return nil, err
	}
	search := func(i int) (float64, error) {
		j := i % len(b.Queries)
		start := time.Now()
		if _, err := b.Search.Search(ctx, retrieval.Query{Mode: retrieval.Hybrid, Text: b.Queries[j], Vector: vecs[j], Alpha: 0.5, Limit: 20}); err != nil {
			return 0, err
		}
		return float64(time.Since(start).Microseconds()) / 1000, nil
	}
	rounds := max(1, int(b.SearchTime/sliceTime))
	slice := b.SearchTime / time.Duration(rounds)
	for round := range rounds {
		for k := range phases {
			if round%2 == 1 {
				k = len(phases) - 1 - k
			}
			if err := b.runSlice(ctx, phases[k], k, round, slice, search); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range phases {
		p.p50 = stats.Percentile(p.ms, 50)
	}
	return phases, nil
}

// revisions hands the writers successive batches of 8 of base, each with a
// new revision number, so that every write changes its documents.
type revisions struct {
	base        []retrieval.Document
	rev, cursor atomic.Int64
}

func (r *revisions) next() ([]retrieval.Document, int64) {
	at := int(r.cursor.Add(8)-8) % len(r.base)
	return r.base[at:min(at+8, len(r.base))], r.rev.Add(1)
}

// writerPhases are the search measure's conditions: no writer, the store
// writers (unless IndexOnly), then the index-only writer at each memindex
// sharing. The stores it opens are added to stores for the caller to close.
func (b Bench) writerPhases(ctx context.Context, src *revisions, stores *[]*docstore.Store) ([]*phase, error) {
	phases := []*phase{{name: "alone"}}
	if !b.IndexOnly {
		normal, err := b.storeWriter(ctx, "a writer upserting through the store, embedding at normal priority (the change off)", b.Encoder, src, stores)
		if err != nil {
			return nil, err
		}
		phases = append(phases, normal)
		if b.WriteEncoder != nil {
			low, err := b.storeWriter(ctx, "a writer upserting through the store, embedding on the "+b.writeLabel(""), b.WriteEncoder, src, stores)
			if err != nil {
				return nil, err
			}
			phases = append(phases, low)
		}
	}
	indexOnly := func(ctx context.Context) (int, error) {
		part, r := src.next()
		docs := make([]retrieval.Document, len(part))
		for j, d := range part {
			d.Text = fmt.Sprintf("%s (revision %d)", d.Text, r)
			docs[j] = d
		}
		return len(docs), b.Search.Put(ctx, docs)
	}
	// The same writer with memindex sharing less with the parent
	// generation, for comparison: its posting maps copied whole by every
	// write, and then also every generation prepared afresh by its first
	// search (as before either was shared).
	return append(phases,
		&phase{name: "a writer putting pre-embedded documents back to back (index only, no model calls)", write: indexOnly},
		&phase{name: "the same writer, posting maps copied whole by every write (layers off)", write: indexOnly, sharing: &memindex.Sharing{Prepared: true}},
		&phase{name: "the same writer, posting maps copied whole and each generation prepared afresh by its first search (both off)", write: indexOnly, sharing: &memindex.Sharing{}}), nil
}

// storeWriter opens a store over the search index embedding with enc and
// returns the phase whose writer upserts src's batches through it.
func (b Bench) storeWriter(ctx context.Context, name string, enc scoring.Encoder, src *revisions, stores *[]*docstore.Store) (*phase, error) {
	s, err := docstore.Open(ctx, docstore.Config{Dir: filepath.Join(b.Dir, fmt.Sprintf("search-%d", len(*stores))), Index: b.Search, Graph: b.Graph, KGKey: b.KGKey,
		Encoder: enc, Replay: true, Logger: quiet})
	if err != nil {
		return nil, err
	}
	*stores = append(*stores, s)
	return &phase{name: name, write: func(ctx context.Context) (int, error) {
		part, r := src.next()
		in := make([]docstore.Input, len(part))
		for j, d := range part {
			in[j] = docstore.Input{ID: d.ID, Title: d.Title, Text: fmt.Sprintf("%s (revision %d)", d.Text, r)}
		}
		_, err := s.Put(ctx, in)
		return len(in), err
	}}, nil
}

// runSlice measures searches for d while p's writer (if any) writes batch
// after batch; the writer starts with the searches and is waited for after
// them, so its last batch is not timed against nothing.
func (b Bench) runSlice(ctx context.Context, p *phase, k, round int, d time.Duration, search func(int) (float64, error)) error {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var werr error
	if p.sharing != nil {
		b.Search.SetSharing(*p.sharing)
		defer b.Search.SetSharing(memindex.Sharing{Prepared: true, Postings: true})
	}
	if p.write != nil {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				n, err := p.write(ctx)
				if err != nil {
					werr = err
					return
				}
				atomic.AddInt64(&p.written, int64(n))
			}
		})
	}
	stopProfile, err := b.startProfile(k, round)
	if err != nil {
		close(stop)
		wg.Wait()
		return err
	}
	end := time.Now().Add(d)
	for i := 0; time.Now().Before(end) && err == nil; i++ {
		var ms float64
		if ms, err = search(i); err == nil {
			p.ms = append(p.ms, ms)
		}
	}
	stopProfile()
	close(stop)
	wg.Wait()
	if err == nil {
		err = werr
	}
	return err
}

// startProfile starts the CPU profile of one slice of phase k, when asked
// for: PREFIX-phaseK-roundR.pprof (go tool pprof merges a phase's files).
func (b Bench) startProfile(k, round int) (stop func(), err error) {
	if b.CPUProfile == "" {
		return func() {}, nil
	}
	return cpuprofile.Start(fmt.Sprintf("%s-phase%d-round%d.pprof", b.CPUProfile, k, round))
}

type restartResult struct {
	docs, sample  int
	embedded      int64
	cold, restart time.Duration
	cacheBytes    int64
}

// countingEncoder counts the texts embedded.
type countingEncoder struct {
	scoring.Encoder
	n *atomic.Int64
}

func (c countingEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	c.n.Add(int64(len(texts)))
	return c.Encoder.Encode(ctx, texts)
}

// Identity keeps the cache key of the wrapped encoder.
func (c countingEncoder) Identity() string {
	if id, ok := c.Encoder.(interface{ Identity() string }); ok {
		return id.Identity()
	}
	return ""
}

// restart builds the corpus's index in a fresh state folder seeded with
// SeedFrom's snapshots (a snapshot hit that seeds the cache), changes
// Changed documents and times the rebuild; the cold build is estimated
// from the time to link and embed a sample without the cache.
func (b Bench) restart(ctx context.Context, progress io.Writer) (restartResult, error) {
	var r restartResult
	in := *b.Restart
	in.Dir = filepath.Join(b.Dir, "state")
	in.Log = nil
	if err := os.MkdirAll(in.Dir, 0o755); err != nil {
		return r, err
	}
	if b.SeedFrom != "" {
		files, _ := filepath.Glob(filepath.Join(b.SeedFrom, "*.gob"))
		for _, f := range files {
			if err := os.Link(f, filepath.Join(in.Dir, filepath.Base(f))); err != nil {
				return r, fmt.Errorf("seed the state folder: %w", err)
			}
		}
	}
	n := &atomic.Int64{}
	enc := countingEncoder{b.Encoder, n}
	start := time.Now()
	g, kgKey, err := in.Graph(ctx)
	if err != nil {
		return r, err
	}
	// Guard: without a snapshot the first start is a cold build (74 minutes
	// for CoDEx-M on two shared cores).
	key, err := state.Fingerprint([]string{in.Corpus}, kgKey, b.Encoder.Version())
	if err != nil {
		return r, err
	}
	if _, err := os.Stat(filepath.Join(in.Dir, "index-"+key+".gob")); err != nil {
		return r, fmt.Errorf("no index snapshot of %s in %s: build it once (dmar load corpus --data %s) before timing its restart", in.Corpus, b.SeedFrom, filepath.Dir(in.Corpus))
	}
	if _, err := in.Index(ctx, g, kgKey, enc); err != nil {
		return r, err
	}
	fmt.Fprintf(progress, "bench docs: first start (snapshot%s) %s, %d embedded\n", map[bool]string{true: " hit, cache seeded", false: " miss: a cold build"}[n.Load() == 0],
		time.Since(start).Round(time.Millisecond), n.Load())
	docs, _, err := corpus.ReadFile(ctx, in.Corpus)
	if err != nil {
		return r, err
	}
	r.docs = len(docs)
	var sb strings.Builder
	for i, d := range docs {
		if i < b.Changed {
			d.Text += " (revised)"
		}
		fmt.Fprintf(&sb, "{\"id\":%q,\"title\":%q,\"text\":%q}\n", d.ID, d.Title, d.Text)
	}
	changed := filepath.Join(b.Dir, "changed", "corpus.jsonl")
	if err := os.MkdirAll(filepath.Dir(changed), 0o755); err != nil {
		return r, err
	}
	if err := os.WriteFile(changed, []byte(sb.String()), 0o644); err != nil {
		return r, err
	}
	in.Corpus = changed
	n.Store(0)
	start = time.Now()
	if _, err := in.Index(ctx, g, kgKey, enc); err != nil {
		return r, err
	}
	r.restart, r.embedded = time.Since(start), n.Load()
	c, err := docstore.OpenCache(in.Dir, docstore.EncoderKey(b.Encoder), kgKey)
	if err != nil {
		return r, err
	}
	r.cacheBytes = c.Bytes()
	c.Close()
	// The cold build links and embeds every document: timed on a sample.
	r.sample = min(64, len(docs))
	sample := fresh(docs[len(docs)-r.sample:])
	start = time.Now()
	if err := corpus.Prepare(ctx, g, b.Encoder, sample, corpus.Options{}); err != nil {
		return r, err
	}
	r.cold = time.Duration(float64(time.Since(start)) * float64(len(docs)) / float64(r.sample))
	return r, nil
}

// fresh copies documents without their links and vectors.
func fresh(docs []retrieval.Document) []retrieval.Document {
	out := make([]retrieval.Document, len(docs))
	for i, d := range docs {
		out[i] = retrieval.Document{ID: d.ID, Title: d.Title, Text: d.Text}
	}
	return out
}
