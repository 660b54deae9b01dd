package textgraph_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/textgraph"
	"github.com/dmar-kg/dmar/internal/textgraph/textgraphtest"
)

// sameGraph checks that want, which must not be empty, and got export the
// same nodes and edges; what names the comparison and its legend.
func sameGraph(t *testing.T, what string, want, got *textgraph.Memory) {
	t.Helper()
	n1, e1 := want.Export()
	n2, e2 := got.Export()
	if len(n1) == 0 || len(e1) == 0 {
		t.Fatalf("%s: the reference graph is empty", what)
	}
	if diff := cmp.Diff(n1, n2); diff != "" {
		t.Errorf("%s: nodes:\n%s", what, diff)
	}
	if diff := cmp.Diff(e1, e2); diff != "" {
		t.Errorf("%s: edges:\n%s", what, diff)
	}
}

// PutAll, which extracts a batch ahead and embeds each label once through
// the vector cache, builds the graph that Put of each batch in turn builds;
// built again from a filled cache (a corpus built once more), it embeds
// nothing and builds that graph still.
func TestPutAllIsPutByBatch(t *testing.T) {
	ctx := context.Background()
	_, docs, b := textgraphtest.Build(t)
	const batch = 7
	n := new(atomic.Int64)
	b.Encoder = textgraphtest.Encoder{Texts: n}
	want := textgraph.NewMemory()
	for lo := 0; lo < len(docs); lo += batch {
		if err := want.Put(ctx, b, docs[lo:min(lo+batch, len(docs))]); err != nil {
			t.Fatal(err)
		}
	}
	plain := n.Swap(0)

	cached := b
	cached.Vectors = textgraph.NewVectors(b.Encoder.Version())
	got := textgraph.NewMemory()
	if err := got.PutAll(ctx, cached, docs, batch, nil); err != nil {
		t.Fatal(err)
	}
	sameGraph(t, "cold cache (-Put by batch +PutAll)", want, got)
	if first := n.Swap(0); first == 0 || first > plain || int(first) != cached.Vectors.Len() {
		t.Errorf("a cold cache embedded %d labels (Put by batch %d) and holds %d: want each label once", first, plain, cached.Vectors.Len())
	}

	path := filepath.Join(t.TempDir(), "vectors.gob")
	if err := cached.Vectors.Save(path); err != nil {
		t.Fatal(err)
	}
	again := b
	var err error
	if again.Vectors, err = textgraph.LoadVectors(path, b.Encoder.Version()); err != nil {
		t.Fatal(err)
	}
	rebuilt := textgraph.NewMemory()
	if err := rebuilt.PutAll(ctx, again, docs, batch, nil); err != nil {
		t.Fatal(err)
	}
	sameGraph(t, "filled cache (-Put by batch +PutAll)", want, rebuilt)
	if k := n.Load(); k != 0 {
		t.Errorf("a rebuild from a filled cache embedded %d labels, want none", k)
	}

	other, err := textgraph.LoadVectors(path, "another encoder")
	if err != nil || other.Len() != 0 {
		t.Errorf("another encoder's cache holds %d labels (%v), want none", other.Len(), err)
	}
}

// A failing extractor stops PutAll with its error; the batches before it
// stay written.
func TestPutAllExtractorError(t *testing.T) {
	_, docs, b := textgraphtest.Build(t)
	b.Extractor = &failSecond{}
	m := textgraph.NewMemory()
	err := m.PutAll(context.Background(), b, docs, 10, nil)
	if err == nil || !strings.Contains(err.Error(), "extractor down") {
		t.Fatalf("PutAll with an extractor failing on its second batch: %v, want its error", err)
	}
	if s := m.Stats(); s.Passages != 10 {
		t.Errorf("%d passages written before the failing batch, want 10", s.Passages)
	}
}

// failSecond extracts as the heuristic does, and fails from its second call.
type failSecond struct{ calls atomic.Int32 }

func (f *failSecond) Name() string { return "fail-second" }

func (f *failSecond) Extract(ctx context.Context, ps []textgraph.Passage) ([]textgraph.Extraction, error) {
	if f.calls.Add(1) > 1 {
		return nil, errors.New("extractor down")
	}
	return textgraph.Heuristic{}.Extract(ctx, ps)
}
