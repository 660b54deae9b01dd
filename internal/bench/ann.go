package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/stats"
	"github.com/dmar-kg/dmar/internal/synth"
)

// ANN is dmar bench ann: the embedded index's vector graph on seeded
// vectors (synth.Space), measured as a row of docs/ann.md's table:
// recall@100 against the exact scan, the p50 and p99 of one search for
// the top 100, the build time, the memory per vector, and recall@100
// again after a tenth of the documents is deleted and another tenth
// given new vectors. Everything goes through memindex's public API, as a
// caller's documents do.
type ANN struct {
	Size, Dim, Queries int
	Seed               uint64
	Ef                 int // 0: the index's default for the size
}

// ANNFlags are dmar bench ann's flags.
type ANNFlags struct{ ANN }

// Register adds the flags to fs.
func (f *ANNFlags) Register(fs *flag.FlagSet) {
	fs.IntVar(&f.Size, "size", 128_000, "documents (seeded vectors)")
	fs.IntVar(&f.Dim, "dim", 384, "dimensions of a vector")
	fs.IntVar(&f.Queries, "queries", 200, "queries, from the same distribution, not in the corpus")
	fs.Uint64Var(&f.Seed, "seed", 51, "seed of the vectors")
	fs.IntVar(&f.Ef, "ef", 0, "candidates a search of the graph explores (0: the index's default for the size)")
}

// Validate names the first flag that cannot make a run.
func (a ANN) Validate() error {
	switch {
	case a.Size < 1000:
		return errs.E(errs.Invalid, "bench ann: --size %d: at least 1000 documents", a.Size)
	case a.Dim < 2:
		return errs.E(errs.Invalid, "bench ann: --dim %d: at least 2", a.Dim)
	case a.Queries < 1:
		return errs.E(errs.Invalid, "bench ann: --queries %d: at least 1", a.Queries)
	case a.Ef < 0:
		return errs.E(errs.Invalid, "bench ann: --ef %d is negative", a.Ef)
	}
	return nil
}

// ANNRow is what Run measured.
type ANNRow struct {
	Size, Ef           int
	Recall, AfterChurn float64
	P50, P99           time.Duration
	Build, Churn       time.Duration
	BytesPerVector     float64 // the live heap the index adds per document, beyond the vectors it was given
	VectorBytes        int     // the vector as given (float32)
}

// Run builds the index, measures it, and prints the row and the table's
// markdown row.
func (a ANN) Run(ctx context.Context, out io.Writer) (ANNRow, error) {
	if err := a.Validate(); err != nil {
		return ANNRow{}, err
	}
	rng := rand.New(rand.NewPCG(a.Seed, 1))
	sp := synth.NewSpace(rng, a.Dim)
	docs := make([]retrieval.Document, a.Size)
	for i, v := range sp.Draw(rng, a.Size) {
		docs[i] = retrieval.Document{ID: strconv.Itoa(i), Vector: v}
	}
	queries := sp.Draw(rng, a.Queries)
	perm := rng.Perm(a.Size)
	deleted, updated := perm[:a.Size/10], perm[a.Size/10:a.Size/5]
	newVecs := sp.Draw(rng, len(updated))

	p := memindex.DefaultParams()
	p.ANNMin, p.ANNEf = 1, a.Ef // the graph at every size
	x := memindex.New(p)
	freeMemory()
	before := liveHeap()
	start := time.Now()
	if err := x.Put(ctx, docs); err != nil {
		return ANNRow{}, err
	}
	if err := x.Build(ctx); err != nil {
		return ANNRow{}, err
	}
	r := ANNRow{Size: a.Size, Build: time.Since(start), VectorBytes: 4 * a.Dim}
	freeMemory()
	r.BytesPerVector = float64(liveHeap()-min(before, liveHeap())) / float64(a.Size)

	at, ok, err := x.VectorRecall(ctx, queries, 100)
	if err != nil {
		return r, err
	}
	if !ok {
		return r, fmt.Errorf("bench ann: the index did not search through its graph")
	}
	r.Recall, r.Ef = at[0].Recall, at[0].Ef
	took := make([]float64, len(queries))
	for i, q := range queries {
		t := time.Now()
		if _, err := x.Search(ctx, retrieval.Query{Mode: retrieval.Vector, Vector: q, Limit: 100}); err != nil {
			return r, err
		}
		took[i] = ms(time.Since(t))
	}
	r.P50 = time.Duration(stats.Percentile(took, 50) * float64(time.Millisecond))
	r.P99 = time.Duration(stats.Percentile(took, 99) * float64(time.Millisecond))

	start = time.Now()
	ids := make([]string, len(deleted))
	for i, d := range deleted {
		ids[i] = docs[d].ID
	}
	if _, err := x.Delete(ctx, ids); err != nil {
		return r, err
	}
	changed := make([]retrieval.Document, len(updated))
	for i, d := range updated {
		changed[i] = retrieval.Document{ID: docs[d].ID, Vector: newVecs[i]}
	}
	if err := x.Put(ctx, changed); err != nil {
		return r, err
	}
	r.Churn = time.Since(start) // the writes insert the new vectors into the graph
	if at, ok, err = x.VectorRecall(ctx, queries, 100); err != nil {
		return r, err
	} else if !ok {
		return r, fmt.Errorf("bench ann: after the writes the index did not search through its graph")
	}
	r.AfterChurn = at[0].Recall
	runtime.KeepAlive(docs)
	fmt.Fprintln(out, r)
	fmt.Fprintln(out, r.Markdown())
	return r, nil
}

func (r ANNRow) String() string {
	return fmt.Sprintf("ann: %d documents (seeded %d-d vectors), embedded HNSW (memindex, ef %d): recall@100 %.4f against the exact scan; search p50 %.2f ms p99 %.2f ms; build %.1f s (%d CPUs); %.0f bytes per vector beside its %d bytes as given; after deleting a tenth and giving a tenth new vectors, recall@100 %.4f (the writes, with their graph inserts, %.1f s)",
		r.Size, r.VectorBytes/4, r.Ef, r.Recall, ms(r.P50), ms(r.P99), r.Build.Seconds(), runtime.GOMAXPROCS(0), r.BytesPerVector, r.VectorBytes, r.AfterChurn, r.Churn.Seconds())
}

// Markdown is the row of docs/ann.md's table.
func (r ANNRow) Markdown() string {
	return fmt.Sprintf("| embedded index (`memindex`) | %d | %.4f | %.2f | %.2f | %.1f | %.0f + %d | %.4f | %.1f |",
		r.Size, r.Recall, ms(r.P50), ms(r.P99), r.Build.Seconds(), r.BytesPerVector, r.VectorBytes, r.AfterChurn, r.Churn.Seconds())
}
