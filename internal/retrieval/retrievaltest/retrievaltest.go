// Package retrievaltest is the conformance suite of the retrieval.Index and
// retrieval.Writer ports. Every search backend runs it: the embedded index in
// every `go test`, Weaviate in CI.
package retrievaltest

import (
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// Backend is a fresh, empty index.
type Backend interface {
	retrieval.Index
	retrieval.Writer
}

// Docs is the suite's fixture: hand-written sentences with 4-d vectors chosen
// so that the vector ranking of every query below is known.
func Docs() []retrieval.Document {
	return []retrieval.Document{
		{ID: "d1", Title: "Inception", Text: "Inception is a science fiction film directed by Christopher Nolan.", Entities: []string{"Q25188", "Q25191"}, Vector: unit(1, 0, 0, 0)},
		{ID: "d2", Title: "Christopher Nolan", Text: "Christopher Nolan is a film director. Nolan directed Inception and Interstellar.", Entities: []string{"Q25191"}, Vector: unit(0.9, 0.1, 0, 0)},
		{ID: "d3", Title: "Interstellar", Text: "Interstellar is a film about space travel.", Entities: []string{"Q13417189"}, Vector: unit(0, 1, 0, 0)},
		{ID: "d4", Title: "Paris", Text: "Paris is the capital of France.", Entities: []string{"Q90", "Q142"}, Vector: unit(0, 0, 1, 0)},
		{ID: "d5", Title: "France", Text: "France is a country in Europe. Its capital is Paris.", Entities: []string{"Q142", "Q90"}, Vector: unit(0, 0, 0.8, 0.2)},
		{ID: "d6", Title: "Lyon", Text: "Lyon is a city in France.", Entities: []string{"Q456"}, Vector: unit(0, 0, 0.2, 0.8)},
	}
}

func unit(v ...float32) []float32 {
	var s float32
	for _, x := range v {
		s += x * x
	}
	n := float32(math.Sqrt(float64(s)))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x / n
	}
	return out
}

// Run checks a backend created by newBackend (called once per subtest that
// needs a fresh index). Backends that index asynchronously should make Put
// return only once documents are searchable.
func Run(t *testing.T, newBackend func(t *testing.T) Backend) {
	ctx := context.Background()
	load := func(t *testing.T) Backend {
		b := newBackend(t)
		if err := b.Put(ctx, Docs()); err != nil {
			t.Fatalf("Put: %v", err)
		}
		return b
	}
	b := load(t)

	ids := func(hs []retrieval.Hit) []string {
		out := make([]string, len(hs))
		for i, h := range hs {
			out[i] = h.Doc.ID
		}
		return out
	}
	search := func(t *testing.T, q retrieval.Query) []retrieval.Hit {
		t.Helper()
		hs, err := b.Search(ctx, q)
		if err != nil {
			t.Fatalf("Search(%+v): %v", q, err)
		}
		checkOrder(t, hs)
		return hs
	}

	s := &suite{ctx: ctx, b: b, load: load, ids: ids, search: search}
	s.writes(t)
	s.searches(t)
	s.limits(t)
	s.cosines(t)
	t.Run("CancelledContext", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		_, err := b.Search(c, retrieval.Query{Mode: retrieval.BM25, Text: "film", Limit: 3})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Search with a cancelled context: %v, want context.Canceled", err)
		}
	})
}

// suite is what Run's groups of subtests share: the backend loaded with
// Docs and its helpers.
type suite struct {
	ctx    context.Context
	b      Backend
	load   func(t *testing.T) Backend
	ids    func([]retrieval.Hit) []string
	search func(t *testing.T, q retrieval.Query) []retrieval.Hit
}

// writes: counting, idempotent puts, reading documents back.
func (s *suite) writes(t *testing.T) {
	ctx, b, load := s.ctx, s.b, s.load
	t.Run("Count", func(t *testing.T) {
		n, err := b.Count(ctx)
		if err != nil || n != len(Docs()) {
			t.Fatalf("Count = %d, %v; want %d", n, err, len(Docs()))
		}
	})

	t.Run("PutIsIdempotent", func(t *testing.T) {
		b2 := load(t)
		changed := Docs()[:2]
		changed[0].Text = "Inception is a heist film."
		if err := b2.Put(ctx, changed); err != nil {
			t.Fatal(err)
		}
		if n, _ := b2.Count(ctx); n != len(Docs()) {
			t.Fatalf("Count after re-put = %d, want %d", n, len(Docs()))
		}
		got, err := b2.Documents(ctx, []string{"d1"})
		if err != nil || len(got) != 1 || got[0].Text != "Inception is a heist film." {
			t.Fatalf("re-put did not replace d1: %+v, %v", got, err)
		}
	})

	t.Run("Documents", func(t *testing.T) {
		got, err := b.Documents(ctx, []string{"d4", "nope", "d1"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].ID != "d4" || got[1].ID != "d1" {
			t.Fatalf("Documents = %v, want [d4 d1]", got)
		}
		want := Docs()[3]
		if got[0].Title != want.Title || got[0].Text != want.Text || !sameSet(got[0].Entities, want.Entities) {
			t.Errorf("d4 = %+v, want %+v", got[0], want)
		}
		if len(got[0].Vector) != 4 || math.Abs(float64(got[0].Vector[2]-1)) > 1e-5 {
			t.Errorf("d4 vector = %v, want the stored one", got[0].Vector)
		}
	})
}

// searches: BM25, vector and hybrid ranking.
func (s *suite) searches(t *testing.T) {
	ids, search := s.ids, s.search
	t.Run("BM25", func(t *testing.T) {
		hs := search(t, retrieval.Query{Mode: retrieval.BM25, Text: "Nolan", Limit: 10})
		if got := ids(hs); len(got) != 2 || got[0] != "d2" || got[1] != "d1" {
			// d2 mentions Nolan three times (title and text), d1 once.
			t.Errorf("bm25 'Nolan' = %v, want [d2 d1]", got)
		}
		hs = search(t, retrieval.Query{Mode: retrieval.BM25, Text: "capital of FRANCE", Limit: 2})
		if got := ids(hs); len(got) != 2 || !sameSet(got, []string{"d4", "d5"}) {
			t.Errorf("bm25 'capital of FRANCE' top 2 = %v, want d4 and d5", got)
		}
		if hs := search(t, retrieval.Query{Mode: retrieval.BM25, Text: "zyzzyva", Limit: 5}); len(hs) != 0 {
			t.Errorf("bm25 on an absent word returned %v", ids(hs))
		}
		if hs := search(t, retrieval.Query{Mode: retrieval.BM25, Text: "film", Limit: 5, WithVectors: false}); len(hs) > 0 && hs[0].Doc.Text == "" {
			t.Errorf("hits must carry the document text")
		}
	})

	t.Run("Vector", func(t *testing.T) {
		hs := search(t, retrieval.Query{Mode: retrieval.Vector, Vector: unit(1, 0.05, 0, 0), Limit: 3, WithVectors: true})
		if got := ids(hs); len(got) != 3 || got[0] != "d1" || got[1] != "d2" || got[2] != "d3" {
			t.Errorf("vector ranking = %v, want [d1 d2 d3]", got)
		}
		if len(hs) > 0 && len(hs[0].Doc.Vector) != 4 {
			t.Errorf("WithVectors: hit vector = %v", hs[0].Doc.Vector)
		}
		if len(hs) > 1 && !(hs[0].Score > hs[1].Score) {
			t.Errorf("vector scores must rise with similarity: %v", hs)
		}
	})

	t.Run("HybridExtremes", func(t *testing.T) {
		q := unit(0, 0, 0.1, 1)
		for _, f := range []retrieval.Fusion{retrieval.RelativeScore, retrieval.RankedFusion} {
			lex := search(t, retrieval.Query{Mode: retrieval.Hybrid, Text: "Paris capital", Vector: q, Alpha: 0, Fusion: f, Limit: 2})
			if got := ids(lex); len(got) != 2 || !sameSet(got, []string{"d4", "d5"}) {
				t.Errorf("%s alpha=0 = %v, want the bm25 top 2 {d4 d5}", f, got)
			}
			vec := search(t, retrieval.Query{Mode: retrieval.Hybrid, Text: "Paris capital", Vector: q, Alpha: 1, Fusion: f, Limit: 1})
			if got := ids(vec); len(got) != 1 || got[0] != "d6" {
				t.Errorf("%s alpha=1 = %v, want the vector top [d6]", f, got)
			}
		}
	})

	t.Run("HybridBlends", func(t *testing.T) {
		// "Interstellar" lexically hits d3 first; the vector points at d1.
		q := retrieval.Query{Mode: retrieval.Hybrid, Text: "Interstellar", Vector: unit(1, 0, 0, 0), Limit: 6}
		for _, c := range []struct {
			alpha float64
			first string
		}{{0.1, "d3"}, {0.9, "d1"}} {
			q.Alpha = c.alpha
			got := ids(search(t, q))
			if len(got) < 3 || got[0] != c.first {
				t.Errorf("hybrid alpha=%.1f = %v, want %s first", c.alpha, got, c.first)
			}
			for _, want := range []string{"d1", "d2", "d3"} {
				if !slices.Contains(got, want) {
					t.Errorf("hybrid alpha=%.1f = %v lacks %s, found by one of the two searches", c.alpha, got, want)
				}
			}
		}
	})

}

// limits: filters, limits and bad queries.
func (s *suite) limits(t *testing.T) {
	ctx, b, ids, search := s.ctx, s.b, s.ids, s.search
	t.Run("Filters", func(t *testing.T) {
		hs := search(t, retrieval.Query{Mode: retrieval.BM25, Text: "film Nolan Paris", Limit: 10, Filter: retrieval.Filter{IDs: []string{"d1", "d4"}}})
		if got := ids(hs); !sameSet(got, []string{"d1", "d4"}) {
			t.Errorf("IDs filter = %v, want {d1 d4}", got)
		}
		hs = search(t, retrieval.Query{Mode: retrieval.Vector, Vector: unit(0, 0, 1, 0), Limit: 10, Filter: retrieval.Filter{AnyEntities: []string{"Q142"}}})
		if got := ids(hs); !sameSet(got, []string{"d4", "d5"}) {
			t.Errorf("entity filter = %v, want {d4 d5}", got)
		}
	})

	t.Run("Limit", func(t *testing.T) {
		hs := search(t, retrieval.Query{Mode: retrieval.Vector, Vector: unit(1, 1, 1, 1), Limit: 4})
		if len(hs) != 4 {
			t.Errorf("limit 4 returned %d hits", len(hs))
		}
	})

	t.Run("InvalidQuery", func(t *testing.T) {
		for _, q := range []retrieval.Query{
			{Mode: "fuzzy", Text: "x", Limit: 1},
			{Mode: retrieval.BM25, Text: "x", Limit: 0},
			{Mode: retrieval.Hybrid, Text: "x", Vector: unit(1, 0, 0, 0), Alpha: 2, Limit: 1},
		} {
			_, err := b.Search(ctx, q)
			if errs.CodeOf(err) != errs.Invalid {
				t.Errorf("Search(%+v) error = %v, want an invalid_argument error", q, err)
			}
		}
	})
}

// cosines: the optional CosineReader, cos(v, D) of the known documents
// among ids that pass the filter, as from their stored vectors.
func (s *suite) cosines(t *testing.T) {
	ctx, b := s.ctx, s.b
	if c, ok := b.(retrieval.CosineReader); ok {
		t.Run("Cosines", func(t *testing.T) {
			v := unit(1, 1, 0.5, 0)
			want := map[string]float64{}
			for _, d := range Docs() {
				var dot, nv float64
				for i, x := range d.Vector {
					dot += float64(x * v[i])
					nv += float64(v[i] * v[i])
				}
				want[d.ID] = dot / math.Sqrt(nv) // d.Vector is a unit vector
			}
			for _, c2 := range []struct {
				ids  []string
				f    retrieval.Filter
				keep []string
			}{
				{[]string{"d1", "nope", "d4", "d3", "d1"}, retrieval.Filter{}, []string{"d1", "d3", "d4"}},
				{[]string{"d1", "d4", "d5", "d6"}, retrieval.Filter{AnyEntities: []string{"Q142"}}, []string{"d4", "d5"}},
				{[]string{"d1", "d4", "d5"}, retrieval.Filter{IDs: []string{"d5", "d6", "d1"}}, []string{"d1", "d5"}},
				{[]string{"d1"}, retrieval.Filter{IDs: []string{"d2"}}, nil},
			} {
				got, err := c.Cosines(ctx, v, c2.ids, c2.f)
				if err != nil {
					t.Fatalf("Cosines(%v, %+v): %v", c2.ids, c2.f, err)
				}
				if len(got) != len(c2.keep) {
					t.Errorf("Cosines(%v, %+v) = %v, want the documents %v", c2.ids, c2.f, got, c2.keep)
				}
				for _, id := range c2.keep {
					if g, ok := got[id]; !ok || math.Abs(g-want[id]) > 1e-5 {
						t.Errorf("Cosines(%v, %+v)[%s] = %v (present %v), want %.6f", c2.ids, c2.f, id, g, ok, want[id])
					}
				}
			}
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := c.Cosines(cancelled, v, []string{"d1"}, retrieval.Filter{}); !errors.Is(err, context.Canceled) {
				t.Errorf("Cosines with a cancelled context: %v, want context.Canceled", err)
			}
		})
	}
}

func checkOrder(t *testing.T, hs []retrieval.Hit) {
	t.Helper()
	for i := 1; i < len(hs); i++ {
		a, b := hs[i-1], hs[i]
		if a.Score < b.Score || (a.Score == b.Score && a.Doc.ID > b.Doc.ID) {
			t.Errorf("hits out of order at %d: %s %.6f then %s %.6f", i, a.Doc.ID, a.Score, b.Doc.ID, b.Score)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x := append([]string(nil), a...)
	y := append([]string(nil), b...)
	sort.Strings(x)
	sort.Strings(y)
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

// Both is call's answer from a and from b, in that order, failing the test
// on an error: for tests that compare two indexes answer by answer.
func Both[T any](t testing.TB, a, b retrieval.Index, call func(retrieval.Index) (T, error)) (fromA, fromB T) {
	t.Helper()
	fromA, err := call(a)
	if err != nil {
		t.Fatal(err)
	}
	if fromB, err = call(b); err != nil {
		t.Fatal(err)
	}
	return fromA, fromB
}

// Searches is q's hits from a and from b (Both).
func Searches(ctx context.Context, t testing.TB, a, b retrieval.Index, q retrieval.Query) (fromA, fromB []retrieval.Hit) {
	t.Helper()
	return Both(t, a, b, func(x retrieval.Index) ([]retrieval.Hit, error) { return x.Search(ctx, q) })
}
