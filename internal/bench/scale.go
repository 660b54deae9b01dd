package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/eval"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/stats"
	"github.com/dmar-kg/dmar/internal/synth"
)

// Scale is dmar bench scale: how a request's cost grows with the corpus.
// For each size, a corpus of that many documents (the real ones, then
// synthetic ones made from them: internal/synth) is loaded into the
// embedded index and, when Remote is set, into a fresh Weaviate
// collection; each is measured for ingest rate, memory, hybrid search and
// the default request's latency (and, with Quality, retrieval quality).
type Scale struct {
	Sizes     []int
	Real      []retrieval.Document // linked and embedded
	Synth     synth.Config
	Questions []string
	QVecs     [][]float32 // the questions' vectors
	Requests  int         // default requests timed per size and backend
	Options   pipeline.Options
	// Pipeline builds the default request's pipeline over an index.
	Pipeline func(retrieval.Index) (*pipeline.Pipeline, error)
	// Embedded builds the embedded index over docs, ready to search.
	Embedded func(ctx context.Context, docs []retrieval.Document) (EmbeddedIndex, error)
	// ExactOnly says that Embedded's index never takes the approximate
	// search (dmar bench scale --ann-min -1), for the report.
	ExactOnly bool
	// CompactVectors says that Embedded's index keeps int8 vectors in
	// memory and the float32 ones in a file (dmar bench scale
	// --compact-vectors), for the report.
	CompactVectors bool
	// EfSweep are further ef values at which the approximate search's
	// recall@100 and search time are measured, beside its own.
	EfSweep []int
	// Remote, when set, opens a fresh collection for a size on the server
	// at RemoteURL (whose memory is read when it runs on this machine).
	Remote    func(ctx context.Context, size int) (RemoteIndex, error)
	RemoteURL string
	// RemoteOnly skips the embedded index (Remote must be set).
	RemoteOnly bool
	// Quality, when set, is evaluated at every size on the embedded index
	// with its systems (dmar, dense, hybrid), reporting Recall@5.
	Quality        *eval.Dataset
	QualitySystems []eval.System
	Encoder        scoring.Encoder
}

// EmbeddedIndex is the embedded index (memindex.Index), which can say how
// its approximate vector search compares with the exact scan.
type EmbeddedIndex interface {
	retrieval.Index
	VectorRecall(ctx context.Context, queries [][]float32, k int, efs ...int) (at []memindex.RecallAt, ok bool, err error)
}

// RemoteIndex is a collection the benchmark loads, searches and drops.
type RemoteIndex interface {
	retrieval.Index
	retrieval.Writer
	// WaitIndexed returns when the server has indexed every vector it
	// acknowledged (a server that indexes asynchronously acknowledges
	// first): the ingest time includes it.
	WaitIndexed(ctx context.Context) error
	Drop(ctx context.Context) error
}

// ScaleRow is one size and backend's figures.
type ScaleRow struct {
	Size, Synthetic        int
	Backend                string
	IngestDocsPerSec       float64
	Ingest                 time.Duration
	RSS, PeakRSS           int64 // bytes of the measured process (dmar, or Weaviate's server)
	HybridP50, HybridP99   float64
	DefaultP50, DefaultP99 float64
	Recall                 string  // the vector search's recall@100, or "exact"
	RecallAt100            float64 // the approximate search's recall@100 against the exact scan; 1 for the exact scan itself
	// BytesPerDoc is the memory a document costs: for the embedded
	// index, the live heap (after a GC) that making the corpus and loading
	// the index added, over the documents (the real documents' own text
	// and vectors were held before, so a size of real documents alone
	// counts the index only); for Weaviate, its server's RSS over them.
	BytesPerDoc float64
	Compact     bool // the embedded index's vectors are int8 in memory, float32 in a file
	Sweep       []memindex.RecallAt
	Quality     map[string]float64
	records     []eval.Record // dmar's, for the loss trace
	titles      map[string]string
	searched    map[string]bool    // "question\x00gold" found by the stage-1 search
	Stages      map[string]float64 // the default request's stages, p50 ms
	GC          gcCost             // what the timed default requests cost the Go runtime
}

// Run measures every size and prints a line per size and backend, then
// scale_ratio=R: the worst over backends of the default request's p50 at
// the largest size over its p50 at the smallest.
func (s Scale) Run(ctx context.Context, out io.Writer) ([]ScaleRow, error) {
	var rows []ScaleRow
	fmt.Fprintf(out, "scale: %d real documents; larger corpora add synthetic ones (internal/synth, seed %d: real sentences recombined, vectors of real documents mixed plus noise)\n", len(s.Real), s.Synth.Seed)
	for _, n := range s.Sizes {
		freeMemory()
		base := liveHeap()
		docs := synth.Corpus(s.Real, n, s.Synth)
		if len(docs) < n {
			return rows, fmt.Errorf("bench scale: could make %d of %d documents (no real document has a vector?)", len(docs), n)
		}
		syn := max(0, n-len(s.Real))
		if !s.RemoteOnly {
			corpus := docs
			if s.Remote == nil {
				// Nothing loads the corpus after the embedded index: drop
				// the benchmark's array of it (120 bytes a document), which
				// a server, holding the index only, would not have.
				docs = nil
			}
			r, err := s.embedded(ctx, corpus, syn, base)
			if err != nil {
				return rows, fmt.Errorf("bench scale: %d documents, embedded: %w", n, err)
			}
			rows = append(rows, r)
			fmt.Fprintln(out, r)
			for _, a := range r.Sweep {
				fmt.Fprintf(out, "scale: %d documents, embedded: vector recall@100 %.4f at ef %d (%.2f ms a search)\n", n, a.Recall, a.Ef, ms(a.Search))
			}
			if len(rows) > 1 && r.records != nil && rows[0].records != nil {
				fmt.Fprintln(out, TraceLoss(rows[0], r))
			}
		}
		if s.Remote != nil {
			r, err := s.remote(ctx, docs, syn)
			if err != nil {
				return rows, fmt.Errorf("bench scale: %d documents, weaviate: %w", n, err)
			}
			rows = append(rows, r)
			fmt.Fprintln(out, r)
		}
		freeMemory()
	}
	fmt.Fprintln(out, Summary(rows))
	return rows, nil
}

// Summary is the run's last line: scale_ratio=X recall_at_100=R
// peak_rss_gb=G, where X is ScaleRatio, R the embedded index's recall@100
// at the largest size (1 for the exact scan; without an embedded row, the
// remote index's) and G the highest peak RSS measured at that size.
func Summary(rows []ScaleRow) string {
	largest := 0
	for _, r := range rows {
		largest = max(largest, r.Size)
	}
	recall, peak, embedded := 0.0, int64(0), false
	for _, r := range rows {
		if r.Size != largest {
			continue
		}
		if r.Backend == "embedded" {
			recall, embedded = r.RecallAt100, true
		} else if !embedded {
			recall = r.RecallAt100
		}
		peak = max(peak, r.PeakRSS)
	}
	return fmt.Sprintf("scale_ratio=%.2f recall_at_100=%.4f peak_rss_gb=%.2f", ScaleRatio(rows), recall, float64(peak)/(1<<30))
}

// ScaleRatio is the worst over backends of the default request's p50 at
// the largest size over its p50 at the smallest.
func ScaleRatio(rows []ScaleRow) float64 {
	first, last := map[string]ScaleRow{}, map[string]ScaleRow{}
	for _, r := range rows {
		if f, ok := first[r.Backend]; !ok || r.Size < f.Size {
			first[r.Backend] = r
		}
		if l, ok := last[r.Backend]; !ok || r.Size > l.Size {
			last[r.Backend] = r
		}
	}
	worst := 0.0
	for b, f := range first {
		if f.DefaultP50 > 0 {
			worst = max(worst, last[b].DefaultP50/f.DefaultP50)
		}
	}
	return worst
}

func (r ScaleRow) String() string {
	mem := "dmar RSS"
	if r.Backend != "embedded" {
		mem = "weaviate RSS"
	}
	var b strings.Builder
	per := "live heap"
	if r.Backend != "embedded" {
		per = "weaviate RSS"
	} else if r.Compact {
		per = "live heap (int8 vectors, float32 in a file)"
	}
	fmt.Fprintf(&b, "scale: %d documents (%d synthetic), %s: ingest %.0f documents/s (%.1f s); %s %s (peak %s); %s %.0f bytes per document; hybrid search p50 %.2f ms p99 %.2f ms; default request p50 %.1f ms p99 %.1f ms; vector recall@100 %s",
		r.Size, r.Synthetic, r.Backend, r.IngestDocsPerSec, r.Ingest.Seconds(), mem, gb(r.RSS), gb(r.PeakRSS), per, r.BytesPerDoc, r.HybridP50, r.HybridP99, r.DefaultP50, r.DefaultP99, r.Recall)
	for _, k := range sortedKeys(r.Quality) {
		fmt.Fprintf(&b, "; %s Recall@5 %.4f", k, r.Quality[k])
	}
	var st []string
	for _, k := range sortedKeys(r.Stages) {
		if r.Stages[k] >= 1 {
			st = append(st, fmt.Sprintf("%s %.1f", k, r.Stages[k]))
		}
	}
	if len(st) > 0 {
		fmt.Fprintf(&b, "; stages of 1 ms or more, p50 ms: %s", strings.Join(st, ", "))
	}
	if r.GC.requests > 0 {
		fmt.Fprintf(&b, "; %s", r.GC)
	}
	return b.String()
}

func gb(n int64) string {
	if n <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f GB", float64(n)/(1<<30))
}

// embedded measures the embedded index over docs; base is the live heap
// before docs were made.
func (s Scale) embedded(ctx context.Context, docs []retrieval.Document, syn int, base uint64) (ScaleRow, error) {
	r := ScaleRow{Size: len(docs), Synthetic: syn, Backend: "embedded", RecallAt100: 1, Compact: s.CompactVectors}
	freeMemory()
	start := time.Now()
	x, err := s.Embedded(ctx, docs)
	if err != nil {
		return r, err
	}
	if c, ok := x.(io.Closer); ok {
		defer c.Close() //nolint:errcheck // the next size makes its own
	}
	r.Ingest = time.Since(start)
	r.IngestDocsPerSec = float64(r.Size) / r.Ingest.Seconds()
	r.RSS, r.PeakRSS = procMemory(os.Getpid())
	freeMemory() // docs is not used after the load: with Run's copy dropped, the index holds what it serves
	r.BytesPerDoc = float64(liveHeap()-min(base, liveHeap())) / float64(r.Size)
	r.Recall = "exact (the corpus is below the approximate search's size)"
	if s.ExactOnly {
		r.Recall = "exact (the approximate search is off)"
	}
	if at, ok, err := x.VectorRecall(ctx, s.QVecs, 100, s.EfSweep...); err != nil {
		return r, err
	} else if ok {
		r.Recall = fmt.Sprintf("%.4f (HNSW, ef %d)", at[0].Recall, at[0].Ef)
		r.RecallAt100 = at[0].Recall
		r.Sweep = at[1:]
	}
	if err := s.measure(ctx, x, &r); err != nil {
		return r, err
	}
	if s.Quality != nil {
		q, recs, err := s.quality(ctx, x)
		if err != nil {
			return r, err
		}
		r.Quality, r.records = q, recs
		if r.titles, err = resultTitles(ctx, x, recs); err != nil {
			return r, err
		}
		if r.searched, err = s.searchedGold(ctx, x, recs); err != nil {
			return r, err
		}
	}
	return r, nil
}

func (s Scale) remote(ctx context.Context, docs []retrieval.Document, syn int) (ScaleRow, error) {
	r := ScaleRow{Size: len(docs), Synthetic: syn, Backend: "weaviate " + s.RemoteURL}
	x, err := s.Remote(ctx, len(docs))
	if err != nil {
		return r, err
	}
	defer x.Drop(context.WithoutCancel(ctx)) //nolint:errcheck // the next size makes its own
	start := time.Now()
	const chunk = 10_000
	for lo := 0; lo < len(docs); lo += chunk {
		if err := x.Put(ctx, docs[lo:min(lo+chunk, len(docs))]); err != nil {
			return r, err
		}
	}
	if err := x.WaitIndexed(ctx); err != nil {
		return r, err
	}
	r.Ingest = time.Since(start)
	r.IngestDocsPerSec = float64(len(docs)) / r.Ingest.Seconds()
	if n, err := x.Count(ctx); err != nil || n != len(docs) {
		return r, fmt.Errorf("after loading %d documents the collection counts %d (%v)", len(docs), n, err)
	}
	// BM25 and hybrid run far slower until memtables are flushed (every 5 s
	// with the project's settings).
	if err := sleepCtx(ctx, 8*time.Second); err != nil {
		return r, err
	}
	if n, err := newProcNode(s.RemoteURL); err == nil {
		if pid, err := n.pid(); err == nil {
			r.RSS, r.PeakRSS = procMemory(pid)
			r.BytesPerDoc = float64(r.RSS) / float64(len(docs))
		}
	}
	if err := s.measure(ctx, x, &r); err != nil {
		return r, err
	}
	if r.RecallAt100, err = remoteRecall(ctx, x, docs, s.QVecs, 100); err != nil {
		return r, fmt.Errorf("vector recall@100: %w", err)
	}
	r.Recall = fmt.Sprintf("%.4f (Weaviate's HNSW against the exact scan)", r.RecallAt100)
	return r, nil
}

// measure times hybrid searches (every question, limit 100, alpha 0.5) and
// default requests (Requests questions, each asked once untimed to warm
// the caches a running server would have warm, then timed).
func (s Scale) measure(ctx context.Context, x retrieval.Index, r *ScaleRow) error {
	var hy []float64
	for i, q := range s.Questions {
		hq := retrieval.Query{Mode: retrieval.Hybrid, Text: q, Vector: s.QVecs[i], Alpha: 0.5, Fusion: retrieval.RelativeScore, Limit: 100}
		t := time.Now()
		if _, err := x.Search(ctx, hq); err != nil {
			return fmt.Errorf("hybrid search: %w", err)
		}
		hy = append(hy, ms(time.Since(t)))
	}
	r.HybridP50, r.HybridP99 = stats.Percentile(hy, 50), stats.Percentile(hy, 99)
	p, err := s.Pipeline(x)
	if err != nil {
		return err
	}
	qs := s.Questions[:min(s.Requests, len(s.Questions))]
	for _, q := range qs {
		if _, err := p.Retrieve(ctx, q, s.Options); err != nil {
			return fmt.Errorf("default request (warm-up): %w", err)
		}
	}
	var dr []float64
	stages := map[string][]float64{}
	before := readGC()
	for _, q := range qs {
		t := time.Now()
		res, err := p.Retrieve(ctx, q, s.Options)
		if err != nil {
			return fmt.Errorf("default request: %w", err)
		}
		dr = append(dr, ms(time.Since(t)))
		for k, v := range res.TimingsMS {
			stages[k] = append(stages[k], v)
		}
	}
	r.GC = readGC().since(before, len(qs))
	r.DefaultP50, r.DefaultP99 = stats.Percentile(dr, 50), stats.Percentile(dr, 99)
	r.Stages = map[string]float64{}
	for k, v := range stages {
		r.Stages[k] = stats.Percentile(v, 50)
	}
	return nil
}

// quality is the systems' mean Recall@5 on the Quality dataset over x,
// and dmar's records.
func (s Scale) quality(ctx context.Context, x retrieval.Index) (map[string]float64, []eval.Record, error) {
	p, err := s.Pipeline(x)
	if err != nil {
		return nil, nil, err
	}
	recs, err := eval.Run(ctx, eval.Config{Pipeline: p, Index: x, Encoder: s.Encoder, KMax: 20}, s.Quality, s.QualitySystems)
	if err != nil {
		return nil, nil, err
	}
	var dmar []eval.Record
	sum, n := map[string]float64{}, map[string]int{}
	for _, rec := range recs {
		sum[rec.System] += rec.Metrics["recall@5"]
		n[rec.System]++
		if rec.System == "dmar" {
			dmar = append(dmar, rec)
		}
	}
	out := map[string]float64{}
	for k, v := range sum {
		out[k] = v / float64(n[k])
	}
	return out, dmar, nil
}

// searchedGold says which gold documents of recs the default request's
// stage-1 search (its mode, candidates and fusion) finds on x.
func (s Scale) searchedGold(ctx context.Context, x retrieval.Index, recs []eval.Record) (map[string]bool, error) {
	vec := map[string][]float32{}
	for i, q := range s.Questions {
		vec[q] = s.QVecs[i]
	}
	o := s.Options
	out := map[string]bool{}
	for _, r := range recs {
		q := retrieval.Query{Mode: retrieval.BM25, Text: r.Question, Limit: o.N}
		if v := vec[r.Question]; o.Stage1 == "hybrid" && v != nil {
			q.Mode, q.Vector, q.Alpha, q.Fusion = retrieval.Hybrid, v, o.Stage1Alpha, o.Fusion
		}
		hits, err := x.Search(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("stage-1 search for the trace: %w", err)
		}
		gold := map[string]bool{}
		for _, g := range r.Gold {
			gold[g] = true
		}
		for _, h := range hits {
			if gold[h.Doc.ID] {
				out[r.ID+"\x00"+h.Doc.ID] = true
			}
		}
	}
	return out, nil
}

// freeMemory returns the heap of the last size to the system, so that the
// next size's figures are its own.
func freeMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// liveHeap is the heap's live bytes (after the caller's freeMemory).
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// procMemory is a process's resident memory and its peak (VmRSS, VmHWM;
// Linux).
func procMemory(pid int) (rss, peak int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return rss, peak
}

func sortedKeys(m map[string]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
