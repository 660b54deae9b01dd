// Package datatest gives tests their own copies of the shared data, to
// change without touching ../shared/data.
package datatest

import (
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
