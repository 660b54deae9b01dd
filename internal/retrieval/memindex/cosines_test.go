package memindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/vec"
)

// Cosines are vec.Cosine of the stored vectors, bit for bit (the graph
// channel's scores and ties read them), for documents in groups of four
// and past them, after a delete and an update, with unknown and filtered
// IDs and a document without a vector left as vec.Cosine leaves them; the
// same with compact vectors.
func TestCosinesAreVecCosine(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 7))
	randVec := func() []float32 {
		v := make([]float32, 48)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	for _, compact := range []bool{false, true} {
		p := DefaultParams()
		if compact {
			p.CompactVectors, p.VectorDir = true, t.TempDir()
		}
		x := New(p)
		ctx := context.Background()
		var docs []retrieval.Document
		for i := range 37 {
			d := retrieval.Document{ID: fmt.Sprintf("d%d", i), Text: "text", Vector: randVec()}
			if i == 11 {
				d.Vector = nil
			}
			docs = append(docs, d)
		}
		if err := x.Put(ctx, docs); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Delete(ctx, []string{"d3"}); err != nil {
			t.Fatal(err)
		}
		docs[5].Vector = randVec()
		if err := x.Put(ctx, docs[5:6]); err != nil {
			t.Fatal(err)
		}
		q := randVec()
		var ids []string
		for i := 36; i >= 0; i-- {
			ids = append(ids, fmt.Sprintf("d%d", i))
		}
		ids = append(ids, "nope", "d7")
		got, err := x.Cosines(ctx, q, ids, retrieval.Filter{IDs: append(ids[:30:30], "d36")})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{}
		for _, d := range docs {
			if d.ID != "d3" && slices.Contains(ids[:30], d.ID) {
				want[d.ID] = vec.Cosine(q, d.Vector)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("compact %v: Cosines (-vec.Cosine +got):\n%s", compact, diff)
		}
	}
}
