// Package datatest gives tests their own copies of the shared data, to
// change without touching ../shared/data, reads its JSON Lines files, and
// round-trips what tests build from it through a snapshot file.
package datatest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
)

// CopyBundle copies the KG bundle files of the shared dataset name
// (triples.tsv, entities.jsonl, relations.json; not its corpus) into a
// temporary folder, with extraEntities appended to entities.jsonl, and
// returns the folder. The test is skipped where the shared data is absent.
func CopyBundle(tb testing.TB, name, extraEntities string) string {
	tb.Helper()
	src, err := datapath.Dataset(name)
	if err != nil {
		tb.Skip("shared data not found:", err)
	}
	dir := tb.TempDir()
	for _, f := range []string{"triples.tsv", "entities.jsonl", "relations.json"} {
		raw, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			tb.Fatal(err)
		}
		if f == "entities.jsonl" {
			raw = append(raw, extraEntities...)
		}
		if err := os.WriteFile(filepath.Join(dir, f), raw, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// JSONL decodes the first limit lines (0: all) of the JSON Lines file path,
// each into a T; a file that cannot be read or a line that does not decode
// fails the test.
func JSONL[T any](tb testing.TB, path string, limit int) []T {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for (limit == 0 || len(out) < limit) && sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			tb.Fatalf("%s line %d: %v", path, len(out)+1, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return out
}

// RoundTrip is x saved to a file in a temporary folder and read back by
// load; an error fails the test.
func RoundTrip[T interface{ Save(path string) error }](tb testing.TB, x T, load func(path string) (T, error)) T {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "snapshot")
	if err := x.Save(p); err != nil {
		tb.Fatal(err)
	}
	back, err := load(p)
	if err != nil {
		tb.Fatal(err)
	}
	return back
}
