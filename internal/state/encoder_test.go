package state_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/state"
)

type fakeEncoder struct{ version, identity string }

func (f fakeEncoder) Encode(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}
func (f fakeEncoder) Dim() int         { return 2 }
func (f fakeEncoder) Version() string  { return f.version }
func (f fakeEncoder) Identity() string { return f.identity }

// The index snapshot records its encoder; a record naming another encoder
// (a snapshot copied by hand, or model files changed under the same
// version) is refused with how to rebuild.
func TestIndexSnapshotRecordsItsEncoder(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.jsonl")
	if err := os.WriteFile(corpus, []byte(`{"id":"D1","title":"A","text":"alpha"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := state.Inputs{Corpus: corpus, Dir: filepath.Join(dir, "state")}
	g := memkg.New(nil, nil, nil)
	enc := fakeEncoder{"enc-a@128tok", "enc-a model sha256 1111"}
	if _, err := in.Index(t.Context(), g, "kg", enc); err != nil {
		t.Fatal(err)
	}
	recs, _ := filepath.Glob(filepath.Join(in.Dir, "index-*.encoder.json"))
	if len(recs) != 1 {
		t.Fatalf("records: %v", recs)
	}
	b, _ := os.ReadFile(recs[0])
	if !strings.Contains(string(b), `"version": "enc-a@128tok"`) || !strings.Contains(string(b), "sha256 1111") {
		t.Fatalf("record:\n%s", b)
	}
	if _, err := in.Index(t.Context(), g, "kg", enc); err != nil {
		t.Fatalf("reload with the same encoder: %v", err)
	}
	_, err := in.Index(t.Context(), g, "kg", fakeEncoder{"enc-a@128tok", "enc-a model sha256 2222"})
	if err == nil || !strings.Contains(err.Error(), "rebuild") || !strings.Contains(err.Error(), "DMAR_ENCODER") {
		t.Fatalf("changed model files: %v", err)
	}
	// A snapshot from before the record is trusted (its key has the version).
	if err := os.Remove(recs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Index(t.Context(), g, "kg", enc); err != nil {
		t.Fatalf("snapshot without record: %v", err)
	}
}

// lenEncoder gives texts of different lengths different directions.
type lenEncoder struct{}

func (lenEncoder) Encode(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		n := float32(len(t))
		out[i] = []float32{1, n, n * n / 10, 3}
	}
	return out, nil
}
func (lenEncoder) Dim() int        { return 4 }
func (lenEncoder) Version() string { return "len@1" }

// The embedded.compact_vectors setting reaches the index the state builds
// and the one it loads from the snapshot: both search as the float32 index
// does (the same hits and scores, vectors included), and both are compact
// (closed, a compact index refuses searches; a float32 one has nothing to
// close).
func TestCompactVectorsSetting(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.jsonl")
	lines := `{"id":"D1","title":"A","text":"alpha"}` + "\n" + `{"id":"D2","title":"B","text":"beta gamma delta"}` + "\n" + `{"id":"D3","title":"C","text":"gamma"}` + "\n"
	if err := os.WriteFile(corpus, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	g := memkg.New(nil, nil, nil)
	q := retrieval.Query{Mode: retrieval.Hybrid, Text: "gamma", Vector: []float32{1, 4, 2, 3}, Alpha: 0.5, Fusion: retrieval.RankedFusion, Limit: 3, WithVectors: true}
	plain := state.Inputs{Corpus: corpus, Dir: filepath.Join(dir, "plain")}
	px, err := plain.Index(t.Context(), g, "kg", lenEncoder{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := px.Search(t.Context(), q)
	if err != nil || len(want) != 3 {
		t.Fatalf("float32 index: %v %v", want, err)
	}
	compact := state.Inputs{Corpus: corpus, Dir: filepath.Join(dir, "compact"), CompactVectors: true, VectorDir: t.TempDir()}
	for _, how := range []string{"built", "from the snapshot"} {
		x, err := compact.Index(t.Context(), g, "kg", lenEncoder{})
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		got, err := x.Search(t.Context(), q)
		if err != nil {
			t.Fatalf("%s: %v", how, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: hits %v, want the float32 index's %v", how, got, want)
		}
		if err := x.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := x.Search(t.Context(), q); err == nil {
			t.Errorf("%s: a closed index searched: it is not compact", how)
		}
	}
	if err := px.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := px.Search(t.Context(), q); err != nil {
		t.Errorf("the float32 index, closed, should still search: %v", err)
	}
}
