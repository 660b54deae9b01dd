package docstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/docstore/docstoretest"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
)

type fixture struct {
	dir   string
	enc   *docstoretest.Encoder
	index *memindex.Index
	store *docstore.Store
}

// open opens a store over a fresh index holding the base corpus, as dmar
// serve does after loading the corpus snapshot.
func open(t *testing.T, dir string, base []retrieval.Document, limits ...docstore.Limits) *fixture {
	t.Helper()
	f := &fixture{dir: dir, enc: &docstoretest.Encoder{}, index: memindex.New(memindex.DefaultParams())}
	if err := f.index.Put(context.Background(), base); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir, f.index, docstoretest.Graph(), func(cfg *docstore.Config) {
		cfg.Encoder = f.enc
		if len(limits) > 0 {
			cfg.Limits = limits[0]
		}
	})
	t.Cleanup(func() { s.Close() })
	f.store = s
	return f
}

// openStore opens the store on dir over x and g as dmar serve does (the
// log replayed, KG key "kg1", the test encoder, quiet); with changes the
// configuration first (another encoder, limits, what follows the writes).
func openStore(t *testing.T, dir string, x docstore.Index, g *memkg.Graph, with func(*docstore.Config)) *docstore.Store {
	t.Helper()
	cfg := docstore.Config{Dir: dir, Index: x, Graph: g, KGKey: "kg1", Encoder: &docstoretest.Encoder{}, Replay: true, Logger: docstoretest.Quiet()}
	with(&cfg)
	s, err := docstore.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func base() []retrieval.Document {
	return []retrieval.Document{{ID: "c1", Title: "London", Text: "A city.", Vector: make([]float32, docstoretest.Dim)}}
}

func search(t *testing.T, x *memindex.Index, text string) []string {
	t.Helper()
	return docstoretest.Find(t, x, retrieval.Query{Mode: retrieval.BM25, Text: text})
}

func TestPutCountsAndGet(t *testing.T) {
	ctx := context.Background()
	f := open(t, t.TempDir(), base())
	res, err := f.store.Put(ctx, []docstore.Input{
		{ID: "d1", Title: "Inception", Text: "A film by Christopher Nolan.", Metadata: json.RawMessage(`{"year": 2010}`)},
		{ID: "c1", Title: "London", Text: "A city."}, // same as the corpus: unchanged
		{ID: "", Text: "no id"},
		{ID: "d2", Title: " ", Text: "\t"},
		{ID: "d1", Text: "again"},
		{ID: "d3", Text: "x", Metadata: json.RawMessage(`[1]`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != 1 || res.Updated != 0 || res.Unchanged != 1 || len(res.Rejected) != 4 {
		t.Fatalf("put = %+v, want 1 created, 1 unchanged, 4 rejected", res)
	}
	wantFields := []string{"documents[2].id", "documents[3].text", "documents[4].id", "documents[5].metadata"}
	for i, r := range res.Rejected {
		if r.Field != wantFields[i] || !strings.Contains(r.Reason, r.Field) {
			t.Errorf("rejection %d = %+v, want field %s named in the reason", i, r, wantFields[i])
		}
	}
	if got := search(t, f.index, "inception nolan"); len(got) == 0 || got[0] != "d1" {
		t.Errorf("search right after the put = %v, want d1 first", got)
	}
	d, err := f.store.Get(ctx, "d1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.Entities, ",") != "Q25188,Q25191" || string(d.Metadata) != `{"year":2010}` || len(d.Vector) != docstoretest.Dim {
		t.Errorf("get d1 = entities %v metadata %s vector %d", d.Entities, d.Metadata, len(d.Vector))
	}
	res, err = f.store.Put(ctx, []docstore.Input{{ID: "d1", Title: "Inception", Text: "A film by Christopher Nolan, in London.", Metadata: json.RawMessage(`{"year": 2010}`)}})
	if err != nil || res.Updated != 1 {
		t.Fatalf("update = %+v, %v", res, err)
	}
	if d, _ := f.store.Get(ctx, "d1"); !strings.Contains(strings.Join(d.Entities, ","), "Q84") {
		t.Errorf("update did not re-link: %v", d.Entities)
	}
	if _, err := f.store.Get(ctx, "nope"); errs.CodeOf(err) != errs.NotFound || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("get unknown = %v, want not found naming it", err)
	}
}

func TestPutLimits(t *testing.T) {
	l := docstore.DefaultLimits()
	l.MaxBatch = 2
	f := open(t, "", nil, l)
	_, err := f.store.Put(context.Background(), make([]docstore.Input, 3))
	if e, ok := errs.As(err); !ok || e.Code != errs.TooLarge || e.Field != "documents" {
		t.Errorf("batch over the limit = %v, want too large naming documents", err)
	}
	res, err := f.store.Put(context.Background(), []docstore.Input{{ID: "big", Text: strings.Repeat("x", docstore.DefaultLimits().MaxTextChars+1)}})
	if err != nil || len(res.Rejected) != 1 || res.Rejected[0].Code != errs.TooLarge || res.Rejected[0].Field != "documents[0].text" {
		t.Errorf("text over the limit = %+v, %v", res, err)
	}
}

func TestDeleteAllOrNothing(t *testing.T) {
	ctx := context.Background()
	f := open(t, t.TempDir(), base())
	if _, err := f.store.Put(ctx, []docstore.Input{{ID: "d1", Text: "Inception by Nolan"}}); err != nil {
		t.Fatal(err)
	}
	_, err := f.store.Delete(ctx, []string{"d1", "ghost"})
	if errs.CodeOf(err) != errs.NotFound || !strings.Contains(err.Error(), `"ghost"`) || strings.Contains(err.Error(), `"d1"`) {
		t.Fatalf("delete with an unknown id = %v, want not found naming only ghost", err)
	}
	if got := search(t, f.index, "inception"); len(got) != 1 {
		t.Fatalf("a refused delete removed something: %v", got)
	}
	if n, err := f.store.Delete(ctx, []string{"d1", "c1"}); err != nil || n != 2 {
		t.Fatalf("delete = %d, %v", n, err)
	}
	if got := search(t, f.index, "inception london"); len(got) != 0 {
		t.Errorf("deleted documents still found: %v", got)
	}
}

// TestRestartReplaysTheLog: writes acknowledged before a restart (the
// store is never closed, as after kill -9) are back after it, over a fresh
// index of the base corpus, without embedding anything again.
func TestRestartReplaysTheLog(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := open(t, dir, base())
	for i := 0; i < 5; i++ {
		if _, err := f.store.Put(ctx, []docstore.Input{{ID: fmt.Sprintf("d%d", i), Text: fmt.Sprintf("Inception copy%d by Nolan", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.store.Put(ctx, []docstore.Input{{ID: "d0", Text: "replaced text about London"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Delete(ctx, []string{"d1", "c1"}); err != nil {
		t.Fatal(err)
	}
	before := f.index.All()
	f.store.Close() // as kill -9 does: the log is fsynced on every write, nothing is flushed here
	g := open(t, dir, base())
	if n := g.enc.Texts.Load(); n != 0 {
		t.Errorf("replay embedded %d texts, want 0 (vectors are logged)", n)
	}
	after := g.index.All()
	if len(after) != len(before) {
		t.Fatalf("after restart %d documents, before %d", len(after), len(before))
	}
	for i := range before {
		if before[i].ID != after[i].ID || before[i].Text != after[i].Text || strings.Join(before[i].Entities, ",") != strings.Join(after[i].Entities, ",") {
			t.Errorf("document %d: before %+v, after %+v", i, before[i], after[i])
		}
	}
	if got := search(t, g.index, "london"); len(got) != 1 || got[0] != "d0" {
		t.Errorf("search london after restart = %v, want [d0]", got)
	}
}

// TestTornTailDiscarded cuts the last record short, and corrupts it, as a
// crash in the middle of a write would: the batch before is applied, the
// cut batch not at all, and later writes go on from the last good record.
func TestTornTailDiscarded(t *testing.T) {
	ctx := context.Background()
	for _, damage := range []string{"truncate", "flip"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			f := open(t, dir, nil)
			if _, err := f.store.Put(ctx, []docstore.Input{{ID: "a", Text: "first batch"}}); err != nil {
				t.Fatal(err)
			}
			good := f.store.LogBytes()
			if _, err := f.store.Put(ctx, []docstore.Input{{ID: "b", Text: "second batch"}, {ID: "c", Text: "second batch too"}}); err != nil {
				t.Fatal(err)
			}
			f.store.Close()
			path := filepath.Join(dir, docstore.LogFile)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if damage == "truncate" {
				b = b[:good+(int64(len(b))-good)/2]
			} else {
				b[len(b)-3] ^= 0xff
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			g := open(t, dir, nil)
			if n, _ := g.index.Count(ctx); n != 1 {
				t.Fatalf("after the damaged batch %d documents, want only a", n)
			}
			if got := g.store.LogBytes(); got != good {
				t.Errorf("log is %d bytes after replay, want it cut to %d", got, good)
			}
			if _, err := g.store.Put(ctx, []docstore.Input{{ID: "d", Text: "after the crash"}}); err != nil {
				t.Fatal(err)
			}
			g.store.Close()
			h := open(t, dir, nil)
			ids := []string{}
			for _, d := range h.index.All() {
				ids = append(ids, d.ID)
			}
			if strings.Join(ids, ",") != "a,d" {
				t.Errorf("after a write following the damage: %v, want [a d]", ids)
			}
		})
	}
}

// TestCompactionKeepsTheOutcome rewrites a long log and checks that the
// replayed index is the same, order included.
func TestCompactionKeepsTheOutcome(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := open(t, dir, base())
	long := strings.Repeat("padding words ", 3000)
	for round := 0; round < 40; round++ {
		if _, err := f.store.Put(ctx, []docstore.Input{{ID: "hot", Text: fmt.Sprintf("round %d %s", round, long)}, {ID: fmt.Sprintf("n%d", round%3), Text: fmt.Sprintf("doc %d", round)}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.store.Delete(ctx, []string{"c1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Put(ctx, []docstore.Input{{ID: "c1", Text: "London again"}}); err != nil {
		t.Fatal(err)
	}
	before := f.index.All()
	big := f.store.LogBytes()
	f.store.Close()           // the log is fsynced on every write: closing adds nothing kill -9 would lose
	g := open(t, dir, base()) // compacts
	if small := g.store.LogBytes(); small*2 > big {
		t.Errorf("log %d bytes after compaction, %d before", small, big)
	}
	g.store.Close()
	h := open(t, dir, base())
	after := h.index.All()
	if len(after) != len(before) {
		t.Fatalf("%d documents after compaction, %d before", len(after), len(before))
	}
	for i := range before {
		if before[i].ID != after[i].ID || before[i].Text != after[i].Text {
			t.Errorf("slot %d: %s %q before, %s %q after", i, before[i].ID, before[i].Text[:min(20, len(before[i].Text))], after[i].ID, after[i].Text[:min(20, len(after[i].Text))])
		}
	}
}

// TestCacheReusesUnchangedContent: a second preparation of a corpus with
// 10 of 100 documents changed embeds just those 10.
func TestCacheReusesUnchangedContent(t *testing.T) {
	dir := t.TempDir()
	enc := &docstoretest.Encoder{}
	docs := func(changed int) []retrieval.Document {
		out := make([]retrieval.Document, 100)
		for i := range out {
			out[i] = retrieval.Document{ID: fmt.Sprintf("d%d", i), Title: "Inception", Text: fmt.Sprintf("film %d by Nolan", i)}
			if i < changed {
				out[i].Text += " (revised)"
			}
		}
		return out
	}
	prepare := func(ds []retrieval.Document) {
		c, err := docstore.OpenCache(dir, docstore.EncoderKey(enc), "kg1")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := corpus.Prepare(context.Background(), docstoretest.Graph(), enc, ds, corpus.Options{Cache: c}); err != nil {
			t.Fatal(err)
		}
	}
	prepare(docs(0))
	if n := enc.Texts.Swap(0); n != 100 {
		t.Fatalf("cold: embedded %d, want 100", n)
	}
	ds := docs(10)
	prepare(ds)
	if n := enc.Texts.Load(); n != 10 {
		t.Errorf("after changing 10: embedded %d, want 10", n)
	}
	fresh := docs(10)
	if err := corpus.Prepare(context.Background(), docstoretest.Graph(), &docstoretest.Encoder{}, fresh, corpus.Options{}); err != nil {
		t.Fatal(err)
	}
	for i := range ds {
		if strings.Join(ds[i].Entities, ",") != strings.Join(fresh[i].Entities, ",") || !equalVec(ds[i].Vector, fresh[i].Vector) {
			t.Fatalf("document %d from the cache differs from a fresh preparation", i)
		}
	}
}

func equalVec(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The index port's conformance suite on the embedded index.
func TestConformanceMemindex(t *testing.T) {
	docstoretest.Run(t, func(_ *testing.T) docstoretest.Backend { return memindex.New(memindex.DefaultParams()) })
}

// A second store on the same folder (another dmar serve on the same
// --state) is refused while the first holds the log.
func TestLogIsLocked(t *testing.T) {
	dir := t.TempDir()
	open(t, dir, nil)
	_, err := docstore.Open(context.Background(), docstore.Config{Dir: dir, Index: memindex.New(memindex.DefaultParams()), Graph: docstoretest.Graph(),
		Encoder: &docstoretest.Encoder{}, Logger: docstoretest.Quiet()})
	if !errors.Is(err, docstore.ErrLocked) {
		t.Fatalf("second open = %v, want ErrLocked", err)
	}
}

// TestCorruptLogRefusedThenRepaired is issue 34's case: 40 acknowledged
// batches, one bit flipped inside the 21st. The store used to open, take
// the damage for a torn tail and cut the log there, losing the 19 batches
// after it; now it refuses to open, naming the log, the offset and the
// intact records that follow, and leaves the file as it was. Repair keeps
// every intact batch, and only the damaged one is lost.
func TestCorruptLogRefusedThenRepaired(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := open(t, dir, nil)
	var starts []int64
	for i := 0; i < 40; i++ {
		starts = append(starts, f.store.LogBytes())
		var batch []docstore.Input
		for j := 0; j < 4; j++ {
			batch = append(batch, docstore.Input{ID: fmt.Sprintf("d%d-%d", i, j), Text: fmt.Sprintf("batch %d document %d about London", i, j)})
		}
		if _, err := f.store.Put(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	end := f.store.LogBytes()
	f.store.Close()
	path := filepath.Join(dir, docstore.LogFile)
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) != end {
		t.Fatalf("log of %d bytes, want %d: %v", len(b), end, err)
	}
	at := (starts[20] + starts[21]) / 2
	b[at] ^= 0x04
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}

	_, err = docstore.Open(ctx, docstore.Config{Dir: dir, Index: memindex.New(memindex.DefaultParams()), Graph: docstoretest.Graph(), KGKey: "kg1",
		Encoder: &docstoretest.Encoder{}, Replay: true, Logger: docstoretest.Quiet()})
	if err == nil {
		t.Fatal("a log damaged before 19 intact records opened")
	}
	for _, s := range []string{path, fmt.Sprintf("byte %d", starts[20]), "19 intact records follow", "dmar docs repair"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q: %v", s, err)
		}
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, b) {
		t.Fatal("the refused log was changed")
	}

	reps, err := docstore.RepairState(dir, false)
	if err != nil || len(reps) != 1 {
		t.Fatalf("repair: %+v, %v", reps, err)
	}
	r := reps[0]
	if !r.Repaired || r.Kept != 39 || r.Before != 20 || r.After != 19 || len(r.Damage) != 1 || r.Damage[0].Records != 1 || r.Damage[0].Offset != starts[20] {
		t.Errorf("report %+v", r)
	}
	var out bytes.Buffer
	if err := docstore.WriteRepairReports(&out, reps, false); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"1 record lost", "kept 39 intact records (20 before the first damage, 19 after it)", r.SetAside} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, out.String())
		}
	}
	g := open(t, dir, nil)
	for _, c := range []struct {
		id   string
		want bool
	}{{"d0-0", true}, {"d19-3", true}, {"d20-0", false}, {"d21-0", true}, {"d39-3", true}} {
		_, err := g.store.Get(ctx, c.id)
		if (err == nil) != c.want {
			t.Errorf("after repair, %s: %v (want found: %v)", c.id, err, c.want)
		}
	}
}
