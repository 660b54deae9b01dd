// Package docstoretest is the conformance suite of the document store's
// index port (docstore.Index): every search backend that takes live writes
// runs it, the embedded index in every go test and Weaviate against the
// real server. It also holds the test doubles the suite needs.
package docstoretest

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// Encoder is a deterministic test double of the sentence encoder (a
// hashed bag of words, L2-normalised; not a model) that counts the texts it
// embeds, so tests can tell re-embedding from reuse.
type Encoder struct{ Texts atomic.Int64 }

// Dim is the vectors' size.
const Dim = 32

func (*Encoder) Dim() int        { return Dim }
func (*Encoder) Version() string { return "test-counting-encoder" }
func (e *Encoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	e.Texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, Dim)
		for _, w := range strings.Fields(strings.ToLower(t)) {
			h := fnv.New32a()
			h.Write([]byte(strings.Trim(w, ".,")))
			v[h.Sum32()%Dim]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n))
		}
		out[i] = v
	}
	return out, ctx.Err()
}

// Graph is a small knowledge graph to link documents against.
func Graph() *memkg.Graph {
	return memkg.New([]kg.Entity{
		{QID: "Q25191", Label: "Christopher Nolan", Aliases: []string{"Nolan"}},
		{QID: "Q25188", Label: "Inception"},
		{QID: "Q84", Label: "London"},
	}, map[string]kg.Relation{"P57": {PID: "P57", Label: "director"}}, []kg.Triple{{Head: "Q25188", PID: "P57", Tail: "Q25191"}})
}

// Quiet is a logger that drops everything.
func Quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// Find returns the ids of q's hits (at most 10).
func Find(t *testing.T, x retrieval.Index, q retrieval.Query) []string {
	t.Helper()
	q.Limit = 10
	hs, err := x.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hs {
		ids = append(ids, h.Doc.ID)
	}
	return ids
}

// Backend is a search backend that takes live writes.
type Backend interface {
	docstore.Index
	retrieval.Index
}

// Run checks that documents written through a docstore.Store over the
// backend are found at once by BM25 and vector search, replaced on update
// and gone everywhere on delete. newBackend returns an empty backend.
func Run(t *testing.T, newBackend func(t *testing.T) Backend) {
	ctx := context.Background()
	b := newBackend(t)
	enc := &Encoder{}
	st, err := docstore.Open(ctx, docstore.Config{Index: b, Graph: Graph(), KGKey: "test", Encoder: enc, Logger: Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	find := func(q retrieval.Query) []string { t.Helper(); return Find(t, b, q) }
	vec := func(text string) []float32 {
		v, _ := (&Encoder{}).Encode(ctx, []string{text})
		return v[0]
	}
	res, err := st.Put(ctx, []docstore.Input{
		{ID: "doc-a", Title: "Inception", Text: "Inception is a film by Christopher Nolan with a quokka."},
		{ID: "doc-b", Title: "London", Text: "London is a city on a wide river."},
		{ID: "doc-c", Title: "Fish", Text: "Fish swim in water."},
	})
	if err != nil || res.Created != 3 {
		t.Fatalf("put = %+v, %v; want 3 created", res, err)
	}
	if got := find(retrieval.Query{Mode: retrieval.BM25, Text: "quokka"}); fmt.Sprint(got) != "[doc-a]" {
		t.Errorf("bm25 quokka right after the put = %v, want [doc-a]", got)
	}
	if got := find(retrieval.Query{Mode: retrieval.Vector, Vector: vec("London. London is a city on a wide river.")}); len(got) == 0 || got[0] != "doc-b" {
		t.Errorf("vector search for doc-b's own text = %v, want doc-b first", got)
	}
	ds, err := b.Documents(ctx, []string{"doc-a"})
	if err != nil || len(ds) != 1 || strings.Join(ds[0].Entities, ",") != "Q25188,Q25191" {
		t.Fatalf("documents(doc-a) = %+v, %v; want linked to Q25188, Q25191", ds, err)
	}
	// Update: the old words are gone, the new ones found, links follow.
	res, err = st.Put(ctx, []docstore.Input{
		{ID: "doc-a", Title: "Inception", Text: "Inception was shot in London by a wombat."},
		{ID: "doc-b", Title: "London", Text: "London is a city on a wide river."},
	})
	if err != nil || res.Updated != 1 || res.Unchanged != 1 {
		t.Fatalf("update = %+v, %v; want 1 updated, 1 unchanged", res, err)
	}
	if got := find(retrieval.Query{Mode: retrieval.BM25, Text: "quokka"}); len(got) != 0 {
		t.Errorf("bm25 for a word the update removed = %v, want nothing", got)
	}
	if got := find(retrieval.Query{Mode: retrieval.BM25, Text: "wombat"}); fmt.Sprint(got) != "[doc-a]" {
		t.Errorf("bm25 for a word the update added = %v, want [doc-a]", got)
	}
	if ds, _ := b.Documents(ctx, []string{"doc-a"}); len(ds) != 1 || strings.Join(ds[0].Entities, ",") != "Q25188,Q84" {
		t.Errorf("links after the update = %+v, want Q25188, Q84", ds)
	}
	// Delete: gone from both searches and Documents; unknown ids are 404.
	if n, err := st.Delete(ctx, []string{"doc-a", "doc-c"}); err != nil || n != 2 {
		t.Fatalf("delete = %d, %v", n, err)
	}
	if got := find(retrieval.Query{Mode: retrieval.BM25, Text: "wombat fish"}); len(got) != 0 {
		t.Errorf("bm25 after the delete = %v, want nothing", got)
	}
	if got := find(retrieval.Query{Mode: retrieval.Vector, Vector: vec("Fish swim in water.")}); fmt.Sprint(got) != "[doc-b]" {
		t.Errorf("vector search after the delete = %v, want only doc-b", got)
	}
	if ds, _ := b.Documents(ctx, []string{"doc-a", "doc-b", "doc-c"}); len(ds) != 1 || ds[0].ID != "doc-b" {
		t.Errorf("documents after the delete = %v, want only doc-b", ds)
	}
	if _, err := st.Delete(ctx, []string{"doc-a"}); errs.CodeOf(err) != errs.NotFound || !strings.Contains(err.Error(), "doc-a") {
		t.Errorf("delete of a deleted id = %v, want not found naming it", err)
	}
	runReplicas(t, b, st)
}

// runReplicas checks two stores over one backend, as two dmar replicas
// with logs of their own: the second returns the metadata the first wrote,
// counts a put equal to the stored document unchanged, and what it changes
// (and only that) is what the first then reads.
func runReplicas(t *testing.T, b Backend, first *docstore.Store) {
	ctx := context.Background()
	second, err := docstore.Open(ctx, docstore.Config{Index: b, Graph: Graph(), KGKey: "test", Encoder: &Encoder{}, Logger: Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	put := func(st *docstore.Store, text, meta string) docstore.PutResult {
		t.Helper()
		in := docstore.Input{ID: "doc-m", Title: "Memento", Text: text}
		if meta != "" {
			in.Metadata = json.RawMessage(meta)
		}
		res, err := st.Put(ctx, []docstore.Input{in})
		if err != nil || len(res.Rejected) > 0 {
			t.Fatalf("put %q %s = %+v, %v", text, meta, res, err)
		}
		return res
	}
	get := func(st *docstore.Store) (docstore.Document, string) {
		t.Helper()
		d, err := st.Get(ctx, "doc-m")
		if err != nil {
			t.Fatal(err)
		}
		return d, strings.Join(d.Entities, ",")
	}
	const nolan, london = "Memento is a film by Christopher Nolan.", "Memento was shot in London."
	const meta = `{"source":"first","year":2000}`
	put(first, nolan, meta)
	if d, ents := get(second); d.Title != "Memento" || d.Text != nolan || string(d.Metadata) != meta || ents != "Q25191" {
		t.Errorf("through the second store: %q %q metadata %s entities %s; want the first's, metadata %s, Q25191", d.Title, d.Text, d.Metadata, ents, meta)
	}
	if res := put(second, nolan, meta); res.Unchanged != 1 {
		t.Errorf("the first's document put again through the second = %+v, want unchanged", res)
	}
	// The second changes the text only: the title and metadata the first wrote stay.
	if res := put(second, london, meta); res.Updated != 1 {
		t.Errorf("a new text through the second = %+v, want updated", res)
	}
	if d, ents := get(first); d.Title != "Memento" || d.Text != london || string(d.Metadata) != meta || ents != "Q84" {
		t.Errorf("through the first after the second's update: %q %q metadata %s entities %s; want the new text, metadata %s, Q84", d.Title, d.Text, d.Metadata, ents, meta)
	}
	put(second, london, `{"source":"second"}`)
	if d, _ := get(first); string(d.Metadata) != `{"source":"second"}` {
		t.Errorf("metadata through the first after the second changed it = %s", d.Metadata)
	}
	// A put without metadata removes it, whichever store wrote it.
	if res := put(second, london, ""); res.Updated != 1 {
		t.Errorf("a put without the stored metadata through the second = %+v, want updated", res)
	}
	if d, _ := get(first); d.Metadata != nil {
		t.Errorf("metadata through the first after the second removed it = %s, want none", d.Metadata)
	}
}
