package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/vec"
)

func randomDocs(r *rand.Rand, n, dim int) []retrieval.Document {
	docs := make([]retrieval.Document, n)
	for i := range docs {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		docs[i] = retrieval.Document{ID: fmt.Sprintf("d%d", i), Title: fmt.Sprintf("doc %d", i), Text: "text", Vector: v}
	}
	return docs
}

// exactTop agrees with sorting every document by cosine.
func TestExactTop(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	docs := randomDocs(r, 500, 16)
	qs := [][]float32{docs[3].Vector, randomDocs(r, 1, 16)[0].Vector}
	got := exactTop(docs, qs, 10)
	for i, q := range qs {
		ids := make([]int, len(docs))
		for j := range ids {
			ids[j] = j
		}
		sort.Slice(ids, func(a, b int) bool {
			return vec.Cosine64(q, docs[ids[a]].Vector) > vec.Cosine64(q, docs[ids[b]].Vector)
		})
		var want []string
		for _, j := range ids[:10] {
			want = append(want, docs[j].ID)
		}
		g := slices.Clone(got[i])
		slices.Sort(g)
		slices.Sort(want)
		if !slices.Equal(g, want) {
			t.Errorf("query %d: top 10 %v, want %v", i, g, want)
		}
	}
	if !slices.Contains(got[0], "d3") {
		t.Errorf("a document's own vector does not find it: %v", got[0])
	}
}

// An index whose vector search is exact has recall 1; one that returns
// only half of the nearest has 0.5.
func TestRemoteRecall(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	docs := randomDocs(r, 400, 16)
	x := memindex.New(memindex.DefaultParams())
	if err := x.Put(ctx, docs); err != nil {
		t.Fatal(err)
	}
	qs := [][]float32{randomDocs(r, 1, 16)[0].Vector, randomDocs(r, 1, 16)[0].Vector}
	got, err := remoteRecall(ctx, x, docs, qs, 20)
	if err != nil || got != 1 {
		t.Fatalf("recall of the exact scan = %v, %v; want 1", got, err)
	}
	got, err = remoteRecall(ctx, halfIndex{x}, docs, qs, 20)
	if err != nil || got != 0.5 {
		t.Fatalf("recall of an index that drops every other hit = %v, %v; want 0.5", got, err)
	}
}

type halfIndex struct{ *memindex.Index }

func (h halfIndex) Search(ctx context.Context, q retrieval.Query) ([]retrieval.Hit, error) {
	res, err := h.Index.Search(ctx, q)
	var out []retrieval.Hit
	for i, r := range res {
		if i%2 == 0 {
			out = append(out, r)
		}
	}
	return out, err
}
