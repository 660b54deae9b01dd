package memindex

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// TestLayeredPostingsEqualFresh: over random upserts and deletes from a
// vocabulary large enough that the layers fold many times, every field's
// posting lists (read through the layers) equal those of an index built
// from scratch and of one that copies its maps whole, and searches score
// alike on all three.
func TestLayeredPostingsEqualFresh(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewSource(5))
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = fmt.Sprintf("w%d", int(r.ExpFloat64()*1500)) // common and rare terms
		}
		return strings.Join(w, " ")
	}
	layered, flat := New(DefaultParams()), New(DefaultParams())
	flat.SetSharing(Sharing{Prepared: true})
	folds, layers := 0, 0
	for step := 0; step < 80; step++ {
		before := len(layered.cur.Load().fields[1].postings.over)
		if r.Intn(4) == 0 {
			var ids []string
			for i := r.Intn(20); i >= 0; i-- {
				ids = append(ids, fmt.Sprintf("d%d", r.Intn(600)))
			}
			for _, x := range []*Index{layered, flat} {
				if _, err := x.Delete(ctx, ids); err != nil {
					t.Fatal(err)
				}
			}
		} else {
			batch := make([]retrieval.Document, 1+r.Intn(30))
			for i := range batch {
				batch[i] = retrieval.Document{ID: fmt.Sprintf("d%d", r.Intn(600)), Title: words(r.Intn(3)), Text: words(1 + r.Intn(40)),
					Vector: []float32{float32(r.NormFloat64()), float32(r.NormFloat64()), 1}}
			}
			for _, x := range []*Index{layered, flat} {
				if err := x.Put(ctx, batch); err != nil {
					t.Fatal(err)
				}
			}
		}
		g := layered.cur.Load()
		if after := len(g.fields[1].postings.over); after < before {
			folds++
		} else if after > 0 {
			layers++
		}
		fresh := New(DefaultParams())
		if err := fresh.Put(ctx, layered.All()); err != nil {
			t.Fatal(err)
		}
		for fi := range g.fields {
			want := byID(fresh.cur.Load(), fi)
			for name, x := range map[string]*Index{"layered": layered, "flat": flat} {
				if got := byID(x.cur.Load(), fi); !reflect.DeepEqual(want, got) {
					diff := cmp.Diff(want, got)
					t.Fatalf("step %d, field %s, %s index: postings differ from a fresh build's (-fresh +index):\n%s", step, g.fields[fi].name, name, diff)
				}
			}
		}
		q := retrieval.Query{Mode: retrieval.Hybrid, Text: words(4), Vector: []float32{1, 0, 1}, Alpha: 0.5, Limit: 10}
		compareErr(t, layered, fresh, []retrieval.Query{q})
		compareErr(t, flat, fresh, []retrieval.Query{q})
		compareRef(t, layered, []retrieval.Query{q, {Mode: retrieval.BM25, Text: q.Text, Limit: 10}})
	}
	t.Logf("the text field's layers folded %d times and were used in %d generations", folds, layers)
	if folds < 2 || layers < 20 {
		t.Errorf("the layers folded %d times and were used in %d generations: the test exercises too little", folds, layers)
	}
}

// byID is field fi's posting lists read through the layers, each posting
// as "document ID:tf" (slots differ where deletes left holes).
func byID(g *gen, fi int) map[string][]string {
	out := map[string][]string{}
	for t, ps := range g.fields[fi].postings.flat() {
		for _, p := range ps {
			out[t] = append(out[t], fmt.Sprintf("%s:%v", g.docs[p.doc].ID, p.tf))
		}
	}
	return out
}
