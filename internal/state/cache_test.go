package state_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/state"
)

// countingEncoder counts the texts it embeds (a test double, not a model).
type countingEncoder struct {
	fakeEncoder
	texts *atomic.Int64
}

func (c countingEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.fakeEncoder.Encode(ctx, texts)
}

// TestChangedCorpusReembedsOnlyChangedDocuments: after 10 of 200 documents
// change, the index is rebuilt (a new snapshot key) embedding only those
// 10, with the links of the changed ones recomputed.
func TestChangedCorpusReembedsOnlyChangedDocuments(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "corpus.jsonl")
	write := func(changed int) {
		var b strings.Builder
		for i := 0; i < 200; i++ {
			text := fmt.Sprintf("document %d", i)
			if i < changed {
				text += " about Nolan"
			}
			fmt.Fprintf(&b, `{"id":"D%d","title":"T%d","text":%q}`+"\n", i, i, text)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := memkg.New([]kg.Entity{{QID: "Q25191", Label: "Nolan"}}, nil, nil)
	n := &atomic.Int64{}
	enc := countingEncoder{fakeEncoder{"enc", "id"}, n}
	in := state.Inputs{Corpus: path, Dir: filepath.Join(dir, "state")}
	write(0)
	if _, err := in.Index(context.Background(), g, "kg", enc); err != nil {
		t.Fatal(err)
	}
	if got := n.Swap(0); got != 200 {
		t.Fatalf("cold build embedded %d, want 200", got)
	}
	// A snapshot from before the cache (none beside it) seeds the cache
	// when it is loaded, embedding nothing.
	if err := os.RemoveAll(filepath.Join(in.Dir, "cache")); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Index(context.Background(), g, "kg", enc); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 0 {
		t.Fatalf("loading the snapshot embedded %d", got)
	}
	write(10)
	x, err := in.Index(context.Background(), g, "kg", enc)
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 10 {
		t.Errorf("after changing 10 documents the rebuild embedded %d, want 10", got)
	}
	ds, _ := x.Documents(context.Background(), []string{"D3", "D150"})
	if len(ds) != 2 || strings.Join(ds[0].Entities, ",") != "Q25191" || len(ds[1].Entities) != 0 || len(ds[1].Vector) != 2 {
		t.Errorf("rebuilt documents: %+v", ds)
	}
}
