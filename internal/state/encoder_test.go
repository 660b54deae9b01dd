package state_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg/memkg"
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
