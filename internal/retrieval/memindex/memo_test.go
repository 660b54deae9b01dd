package memindex

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// Within a request's memo, a repeated hybrid search reuses the vector scan
// and returns what a fresh search returns; a different vector, or a write
// (a new generation) in between, is searched afresh.
func TestSearchMemo(t *testing.T) {
	x := New(DefaultParams())
	var docs []retrieval.Document
	for i := 0; i < 40; i++ {
		docs = append(docs, retrieval.Document{ID: fmt.Sprintf("d%02d", i), Text: fmt.Sprintf("film %d actor", i),
			Vector: []float32{float32(i % 7), float32(i % 5), 1}})
	}
	if err := x.Put(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	q := func(v ...float32) retrieval.Query {
		return retrieval.Query{Mode: retrieval.Hybrid, Text: "film actor", Vector: v, Alpha: 0.5, Fusion: retrieval.RelativeScore, Limit: 5}
	}
	fresh := func(qq retrieval.Query) []retrieval.Hit {
		h, err := x.Search(context.Background(), qq)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	ctx := retrieval.WithSearchMemo(context.Background())
	search := func(qq retrieval.Query) []retrieval.Hit {
		h, err := x.Search(ctx, qq)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	first := search(q(1, 0, 1))
	if _, ok := retrieval.SearchMemoFrom(ctx).Load(vectorMemoKey{x.cur.Load(), x.params.HybridCandidates}); !ok {
		t.Fatal("the memo holds no vector scan after a hybrid search")
	}
	if again := search(q(1, 0, 1)); !reflect.DeepEqual(again, first) || !reflect.DeepEqual(again, fresh(q(1, 0, 1))) {
		t.Fatal("a repeated search from the memo differs from a fresh one")
	}
	if got, want := search(q(0, 1, 0.2)), fresh(q(0, 1, 0.2)); !reflect.DeepEqual(got, want) {
		t.Fatal("a search with another vector reused the memo")
	}
	if err := x.Put(context.Background(), []retrieval.Document{{ID: "new", Text: "film actor actor", Vector: []float32{1, 0, 1}}}); err != nil {
		t.Fatal(err)
	}
	got := search(q(1, 0, 1))
	if want := fresh(q(1, 0, 1)); !reflect.DeepEqual(got, want) || got[0].Doc.ID != "new" {
		t.Fatalf("after a write the memo's old scan was reused: first hit %s", got[0].Doc.ID)
	}
}
