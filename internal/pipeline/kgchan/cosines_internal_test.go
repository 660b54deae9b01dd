package kgchan

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// cosineTable is an index that knows its documents' cosines (a
// retrieval.CosineReader) and records what it is asked.
type cosineTable struct {
	retrieval.Index
	cos   map[string]float64
	asked [][]string
}

func (x *cosineTable) Cosines(_ context.Context, _ []float32, ids []string, _ retrieval.Filter) (map[string]float64, error) {
	x.asked = append(x.asked, ids)
	out := map[string]float64{}
	for _, id := range ids {
		if v, ok := x.cos[id]; ok {
			out[id] = v
		}
	}
	return out, nil
}

// indexCosines asks for the first cosineBatch documents' cosines, then for
// the others that can still reach the kept k; the scores stage keeps what it
// keeps with every cosine known, entities without a document dropped.
func TestIndexCosinesAsksForWhatTheRankingNeeds(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 4))
	for _, c := range []struct {
		name          string
		n             int
		spread, pop   float64 // relevance falls by spread over the n documents
		missing       int     // every missing-th entity has no document
		fewer         bool    // the calls must ask for fewer than all
		oneCall       bool
		graphRelation string
	}{
		{name: "steep relevance", n: 1000, spread: 1, missing: 7, fewer: true},
		{name: "flat relevance", n: 600, spread: 0.01, missing: 5},
		{name: "with popularity", n: 800, spread: 0.8, pop: 0.05, missing: 9, fewer: true},
		{name: "fewer than a batch", n: 40, spread: 1, missing: 3, oneCall: true},
		{name: "relations off", n: 300, spread: 1, graphRelation: "none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			x := &cosineTable{cos: map[string]float64{}}
			// the dmar method's channel settings
			o := Options{Recall: 2, K: 50, Weight: 0.3, Relations: "plain", Roots: 1, Popularity: 0.01, RelationQuery: "masked"}
			if c.graphRelation != "" {
				o.Relations = c.graphRelation
			}
			r := Channel{Docs: x, Options: o}
			d := documents{pathOf: map[string]pathrel.Path{}, pending: true}
			pop := map[string]float64{}
			all := documents{pathOf: d.pathOf}
			for i := range c.n {
				id := fmt.Sprintf("Q%d", i+1)
				d.pathOf[id] = pathrel.Path{Entity: id, Relevance: 1 - c.spread*float64(i)/float64(c.n)}
				d.docs = append(d.docs, reachedDoc{id: id})
				pop[id] = c.pop * rng.Float64()
				if c.missing > 0 && i%c.missing == 0 {
					continue
				}
				x.cos[id] = rng.Float64()*1.2 - 0.2
				all.docs = append(all.docs, reachedDoc{id: id, cosQD: x.cos[id]})
			}
			got, err := r.indexCosines(context.Background(), nil, d, pop, nopTrace{})
			if err != nil {
				t.Fatal(err)
			}
			want := r.scoreDocuments(all, pop)
			have := r.scoreDocuments(got, pop)
			if diff := cmp.Diff(want.hits, have.hits); diff != "" {
				t.Errorf("kept %d; with the cosines asked for (-all known +asked):\n%s", len(have.hits), diff)
			}
			if diff := cmp.Diff(want.paths, have.paths); diff != "" {
				t.Errorf("paths (-all known +asked):\n%s", diff)
			}
			if n := min(len(all.docs), o.K); len(have.hits) != n {
				t.Errorf("kept %d, want %d", len(have.hits), n)
			}
			if len(x.asked) == 0 || len(x.asked) > 2 || len(x.asked[0]) != min(cosineBatch, c.n) {
				t.Fatalf("%d calls, the first for %d IDs", len(x.asked), len(x.asked[0]))
			}
			if c.oneCall != (len(x.asked) == 1) {
				t.Errorf("%d calls", len(x.asked))
			}
			total := 0
			for _, a := range x.asked {
				total += len(a)
			}
			if c.fewer && total >= c.n*3/4 {
				t.Errorf("asked for %d of %d cosines: the bound saved little", total, c.n)
			}
			t.Logf("asked for %d of %d cosines in %d calls", total, c.n, len(x.asked))
		})
	}
}
