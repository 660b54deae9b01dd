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
}

// Run runs every part and prints the table to w.
func (b Bench) Run(ctx context.Context, w, progress io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "measure\tbaseline\tlive documents\tlive/baseline\n")
	say := func(format string, args ...any) { fmt.Fprintf(progress, "bench docs: "+format+"\n", args...) }

	say("throughput over %d documents, batches of %d", len(b.Docs), b.Batch)
	load, put, st, err := b.throughput(ctx)
	if err != nil {
		return err
	}
	n := float64(len(b.Docs))
	fmt.Fprintf(tw, "docs/s, %d documents twice, ABBA order (load corpus path | PUT batches of %d, fsynced)\t%.2f\t%.2f\t%.2fx\n",
		len(b.Docs), b.Batch, 2*n/load.Seconds(), 2*n/put.Seconds(), load.Seconds()/put.Seconds())

	say("search p50 over %d documents, %s alone and %s while a writer upserts", b.countSearch(ctx), b.SearchTime, b.SearchTime)
	for _, models := range []bool{true, false} {
		alone, busy, writes, err := b.searchUnderWrites(ctx, models)
		if err != nil {
			return err
		}
		how := "a writer upserting through the store (linking and embedding on the same cores)"
		if !models {
			how = "a writer putting pre-embedded documents back to back (index only, no model calls)"
		}
		fmt.Fprintf(tw, "hybrid search p50 ms, %s each (alone | %s, %d documents written meanwhile)\t%.3f\t%.3f\t%.2fx\n",
			b.SearchTime, how, writes, alone, busy, busy/alone)
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
	fmt.Fprintf(tw, "document log bytes per document (text, links, vector, framing)\t\t%.0f\t\n", float64(st)/n)
	return tw.Flush()
}

// throughput times the load path and PUT batches on the same documents,
// each into a fresh index, twice each in the order load, PUT, PUT, load so
// that drift of a shared machine falls on both; st is one PUT log's size.
func (b Bench) throughput(ctx context.Context) (load, put time.Duration, st int64, err error) {
	// Warm the encoder once so neither side pays its first call.
	if _, err := b.Encoder.Encode(ctx, []string{"warm up"}); err != nil {
		return 0, 0, 0, err
	}
	for round, isPut := range []bool{false, true, true, false} {
		var d time.Duration
		if isPut {
			d, st, err = b.putAll(ctx, filepath.Join(b.Dir, fmt.Sprintf("throughput-%d", round)))
			put += d
		} else {
			d, err = b.loadAll(ctx)
			load += d
		}
		if err != nil {
			return 0, 0, 0, err
		}
	}
	return load, put, st, nil
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

// putAll writes the documents through a fresh store in batches.
func (b Bench) putAll(ctx context.Context, dir string) (time.Duration, int64, error) {
	s, err := docstore.Open(ctx, docstore.Config{Dir: dir, Index: memindex.New(memindex.DefaultParams()), Graph: b.Graph, KGKey: b.KGKey,
		Encoder: b.Encoder, Replay: true, Logger: quiet})
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

// searchUnderWrites gives hybrid search's p50 (ms) alone and while a
// writer upserts changed copies of the index's documents: through a store
// (models), or straight into the index with their vectors kept.
func (b Bench) searchUnderWrites(ctx context.Context, models bool) (alone, busy float64, written int64, err error) {
	vecs, err := b.Encoder.Encode(ctx, b.Queries)
	if err != nil {
		return 0, 0, 0, err
	}
	searchAll := func() ([]float64, error) {
		var ms []float64
		end := time.Now().Add(b.SearchTime)
		for i := 0; time.Now().Before(end); i++ {
			j := i % len(b.Queries)
			start := time.Now()
			if _, err := b.Search.Search(ctx, retrieval.Query{Mode: retrieval.Hybrid, Text: b.Queries[j], Vector: vecs[j], Alpha: 0.5, Limit: 20}); err != nil {
				return nil, err
			}
			ms = append(ms, float64(time.Since(start).Microseconds())/1000)
		}
		return ms, nil
	}
	a, err := searchAll()
	if err != nil {
		return 0, 0, 0, err
	}
	s, err := docstore.Open(ctx, docstore.Config{Dir: filepath.Join(b.Dir, fmt.Sprintf("search-%v", models)), Index: b.Search, Graph: b.Graph, KGKey: b.KGKey,
		Encoder: b.Encoder, Replay: true, Logger: quiet})
	if err != nil {
		return 0, 0, 0, err
	}
	defer s.Close()
	all := b.Search.All()
	base := fresh(all[:min(len(all), 512)])
	if !models {
		base = append([]retrieval.Document(nil), all[:min(len(all), 512)]...)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var n atomic.Int64
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for round := 1; ; round++ {
			for i := 0; i < len(base); i += 8 {
				select {
				case <-stop:
					return
				default:
				}
				part := base[i:min(i+8, len(base))]
				if !models {
					docs := make([]retrieval.Document, len(part))
					for j, d := range part {
						d.Text = fmt.Sprintf("%s (revision %d)", d.Text, round)
						docs[j] = d
					}
					if err := b.Search.Put(ctx, docs); err != nil {
						werr = err
						return
					}
					n.Add(int64(len(docs)))
					continue
				}
				in := make([]docstore.Input, len(part))
				for j, d := range part {
					in[j] = docstore.Input{ID: d.ID, Title: d.Title, Text: fmt.Sprintf("%s (revision %d)", d.Text, round)}
				}
				if _, err := s.Put(ctx, in); err != nil {
					werr = err
					return
				}
				n.Add(int64(len(in)))
			}
		}
	}()
	// Let the writer get going before timing.
	for n.Load() == 0 && werr == nil {
		time.Sleep(10 * time.Millisecond)
	}
	bz, err := searchAll()
	close(stop)
	wg.Wait()
	if err == nil {
		err = werr
	}
	if err != nil {
		return 0, 0, 0, err
	}
	return stats.Percentile(a, 50), stats.Percentile(bz, 50), n.Load(), nil
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
