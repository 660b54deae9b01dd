package docbench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/docstore/docstoretest"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/state"
)

// TestRunPrintsEveryFigure runs the whole benchmark on a tiny corpus with
// the test encoder: every row is printed, and the restart embeds exactly
// the changed documents.
func TestRunPrintsEveryFigure(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	g := docstoretest.Graph()
	// A KG bundle and a corpus for the restart part.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(data, "entities.jsonl"), []byte(`{"qid": "Q25191", "label": "Christopher Nolan"}`+"\n"), 0o644))
	must(os.WriteFile(filepath.Join(data, "relations.json"), []byte(`{}`), 0o644))
	must(os.WriteFile(filepath.Join(data, "triples.tsv"), nil, 0o644))
	var docs []retrieval.Document
	var corpus strings.Builder
	for i := 0; i < 40; i++ {
		d := retrieval.Document{ID: fmt.Sprintf("D%d", i), Title: fmt.Sprintf("Film %d", i), Text: fmt.Sprintf("film number %d by Christopher Nolan", i)}
		docs = append(docs, d)
		fmt.Fprintf(&corpus, "{\"id\":%q,\"title\":%q,\"text\":%q}\n", d.ID, d.Title, d.Text)
	}
	must(os.WriteFile(filepath.Join(data, "corpus.jsonl"), []byte(corpus.String()), 0o644))
	if _, err := bundle.Read(ctx, data); err != nil {
		t.Fatal(err)
	}
	enc := &docstoretest.Encoder{}
	// The state folder the restart is seeded from holds the corpus's snapshot.
	seed := filepath.Join(dir, "seed")
	in := state.Inputs{Bundle: data, Corpus: filepath.Join(data, "corpus.jsonl"), Dir: seed}
	kgGraph, kgKey, err := in.Graph(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Index(ctx, kgGraph, kgKey, enc); err != nil {
		t.Fatal(err)
	}
	x := memindex.New(memindex.DefaultParams())
	prepared := append([]retrieval.Document(nil), docs...)
	for i := range prepared {
		v, _ := enc.Encode(ctx, []string{prepared[i].Text})
		prepared[i].Vector = v[0]
	}
	must(x.Put(ctx, prepared))
	// The write encoder, as dmar serve's Background, counts its texts.
	var written atomic.Int64
	b := Bench{Graph: g, KGKey: "test", Encoder: enc, WriteEncoder: countingEncoder{&docstoretest.Encoder{}, &written}, Docs: docs[:20], Batch: 8, Search: x,
		Queries: []string{"film nolan", "number 3"}, SearchTime: 100 * time.Millisecond, Restart: &state.Inputs{Bundle: data, Corpus: in.Corpus}, SeedFrom: seed, Changed: 3,
		Dir: filepath.Join(dir, "scratch")}
	var out bytes.Buffer
	if err := b.Run(ctx, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"docs/s, 20 documents", "low-priority write encoder)", "normal priority: the change off)", "hybrid search p50 ms, 100ms, no writer",
		"embedding at normal priority (the change off)", "embedding on the low-priority write encoder", "index only", "prepared afresh by its first search (both off)", "copied whole by every write (layers off)", "restart s, 3 of 40 documents changed",
		"documents embedded by the restart  ", "bytes per document"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	// The PUT side embeds through the write encoder (twice 20 documents and
	// the warm-up), and so does its writer under searches.
	if n := written.Load(); n <= 41 {
		t.Errorf("the write encoder embedded %d texts, want the throughput's 41 and the search phase's writes", n)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		var n int
		if i := strings.Index(line, "embedding"); i > 0 && strings.Contains(line, "documents written meanwhile") {
			if _, err := fmt.Sscanf(lastField(line, " documents written"), "%d", &n); err != nil {
				t.Errorf("%q: %v", line, err)
			}
			if n == 0 {
				t.Errorf("no documents written by the writer of %q", line)
			}
		}
	}
	var cold, embedded int
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "documents embedded by the restart") {
			if _, err := fmt.Sscanf(strings.Join(strings.Fields(line)[5:], " "), "%d %d", &cold, &embedded); err != nil {
				t.Errorf("%q: %v", line, err)
			}
		}
	}
	if cold != 40 || embedded != 3 {
		t.Errorf("restart embedded %d of %d, want 3 of 40:\n%s", embedded, cold, out.String())
	}
}

// TestIndexOnly: --index-only measures searches alone and under the two
// index-only writers (sharing all, the prepared parts only, nothing), each of which writes, and
// nothing else.
func TestIndexOnly(t *testing.T) {
	ctx := context.Background()
	x := memindex.New(memindex.DefaultParams())
	enc := &docstoretest.Encoder{}
	var docs []retrieval.Document
	for i := 0; i < 100; i++ {
		d := retrieval.Document{ID: fmt.Sprintf("D%d", i), Title: fmt.Sprintf("Film %d", i), Text: fmt.Sprintf("film number %d by Christopher Nolan", i)}
		v, _ := enc.Encode(ctx, []string{d.Text})
		d.Vector = v[0]
		docs = append(docs, d)
	}
	if err := x.Put(ctx, docs); err != nil {
		t.Fatal(err)
	}
	b := Bench{Encoder: enc, Search: x, Queries: []string{"film nolan", "number 3"}, SearchTime: 100 * time.Millisecond, IndexOnly: true, Dir: t.TempDir()}
	var out bytes.Buffer
	if err := b.Run(ctx, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.Contains(line, "docs/s") || strings.Contains(line, "through the store") || strings.Contains(line, "log bytes") {
			t.Errorf("an --index-only run printed %q", line)
		}
		if i := strings.Index(line, " documents written meanwhile"); i > 0 {
			rows++
			var n int
			if _, err := fmt.Sscanf(line[strings.LastIndex(line[:i], " ")+1:], "%d", &n); err != nil {
				t.Errorf("%q: %v", line, err)
			}
			if n == 0 {
				t.Errorf("no documents written by the writer of %q", line)
			}
		}
	}
	if rows != 3 || !strings.Contains(out.String(), "prepared afresh") {
		t.Errorf("want the three index-only writers' rows, got\n%s", out.String())
	}
}

// lastField is the word of line just before the first occurrence of marker.
func lastField(line, marker string) string {
	before, _, _ := strings.Cut(line, marker)
	return before[strings.LastIndex(before, " ")+1:]
}
