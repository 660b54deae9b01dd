package docstore_test

import (
	"context"
	"testing"

	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/docstore/docstoretest"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/textgraph"
	"github.com/dmar-kg/dmar/internal/textgraph/textgraphtest"
)

// openWithTextGraph is open with a text graph built from the base corpus,
// as dmar serve builds it before the store replays its log.
func openWithTextGraph(t *testing.T, dir string) (*docstore.Store, *textgraph.Memory) {
	t.Helper()
	ctx := context.Background()
	g := docstoretest.Graph()
	x := memindex.New(memindex.DefaultParams())
	if err := x.Put(ctx, base()); err != nil {
		t.Fatal(err)
	}
	m := textgraph.NewMemory()
	live := textgraph.Live{Store: m,
		Builder: textgraph.Builder{Extractor: textgraph.Heuristic{}, Linker: g, KG: g, Encoder: textgraphtest.Encoder{}}}
	if err := live.Put(ctx, base()); err != nil {
		t.Fatal(err)
	}
	return openStore(t, dir, x, g, func(cfg *docstore.Config) { cfg.TextGraph = live }), m
}

// passagesOf is how many passages hold the phrase (0: none, or no such node).
func passagesOf(t *testing.T, m *textgraph.Memory, phrase string) int {
	t.Helper()
	ms, err := m.Match(context.Background(), []string{textgraph.PhraseKey(textgraph.Key(phrase))}, nil, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		return 0
	}
	return ms[0].Passages
}

// The text graph follows every write, and after a restart the log's
// outcome: a put passage's phrases join it, an update that drops a phrase
// takes it back, a deleted passage gives back its own.
func TestTextGraphFollowsWrites(t *testing.T) {
	dir := t.TempDir()
	s, m := openWithTextGraph(t, dir)
	write(t, s, []docstore.Input{
		{ID: "p1", Title: "Memo", Text: "The Zanzibar Quartet met the Harbour Board on Tuesday."},
		{ID: "p2", Title: "Notes", Text: "The Zanzibar Quartet played again."},
	})
	if n := passagesOf(t, m, "Zanzibar Quartet"); n != 2 {
		t.Fatalf("Zanzibar Quartet after the put: %d passages, want 2", n)
	}
	if n := passagesOf(t, m, "Harbour Board"); n != 1 {
		t.Fatalf("Harbour Board after the put: %d passages, want 1", n)
	}
	write(t, s, []docstore.Input{{ID: "p1", Title: "Memo", Text: "The Harbour Board met on Tuesday."}}, "p2")
	check := func(when string) {
		t.Helper()
		if n := passagesOf(t, m, "Zanzibar Quartet"); n != 0 {
			t.Errorf("%s: Zanzibar Quartet in %d passages, want 0 (p1 dropped it, p2 is deleted)", when, n)
		}
		if n := passagesOf(t, m, "Harbour Board"); n != 1 {
			t.Errorf("%s: Harbour Board in %d passages, want 1", when, n)
		}
		if st := m.Stats(); st.Passages != 2 {
			t.Errorf("%s: %d passages in the graph, want 2 (c1, p1): %+v", when, st.Passages, st)
		}
	}
	check("after the writes")
	s.Close()
	s, m = openWithTextGraph(t, dir)
	defer s.Close()
	check("after a restart")
}
