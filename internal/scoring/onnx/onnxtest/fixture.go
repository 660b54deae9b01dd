package onnxtest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
)

// Item is one input of a parity fixture written by
// models/encoder/reference_embeddings.py: either a literal Text, or a
// reference into the shared data (Dataset/File/Line/Field) with the SHA-256
// of the text, so that real data is not copied into the repository.
type Item struct {
	Text    *string `json:"text,omitempty"`
	Dataset string  `json:"dataset,omitempty"`
	File    string  `json:"file,omitempty"`
	Line    int     `json:"line"`
	Field   string  `json:"field,omitempty"`
	SHA256  string  `json:"sha256,omitempty"`
}

// Label names the item in test output.
func (it Item) Label() string {
	if it.Text != nil {
		s := *it.Text
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%s/%s[%d].%s", it.Dataset, it.File, it.Line, it.Field)
}

// Input is the item itself; a fixture record that embeds an Item has it
// too, which is how TextsOf reads the records' items.
func (it Item) Input() Item { return it }

// ReadFixture decodes the JSON fixture file at path into v.
func ReadFixture(tb testing.TB, path string, v any) {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
}

// TextsOf is Texts of the Items that records embed.
func TextsOf[R interface{ Input() Item }](tb testing.TB, records []R) []string {
	tb.Helper()
	items := make([]Item, len(records))
	for i, r := range records {
		items[i] = r.Input()
	}
	return Texts(tb, items)
}

// Texts resolves the items' texts, reading the shared data once per file.
// Missing shared data skips the test (fails it when CI=true).
func Texts(tb testing.TB, items []Item) []string {
	tb.Helper()
	files := map[string][]map[string]any{}
	out := make([]string, len(items))
	for i, it := range items {
		if it.Text != nil {
			out[i] = *it.Text
			continue
		}
		key := it.Dataset + "/" + it.File
		recs, ok := files[key]
		if !ok {
			recs = readRecords(tb, it.Dataset, it.File)
			files[key] = recs
		}
		if it.Line < 0 || it.Line >= len(recs) {
			tb.Fatalf("%s: line %d out of range (%d records)", key, it.Line, len(recs))
		}
		s, ok := recs[it.Line][it.Field].(string)
		if !ok {
			tb.Fatalf("%s: no string field %q", it.Label(), it.Field)
		}
		sum := sha256.Sum256([]byte(s))
		if hex.EncodeToString(sum[:]) != it.SHA256 {
			tb.Fatalf("%s: the shared data changed since the fixture was computed (sha256 differs); rerun models/encoder/reference_embeddings.py", it.Label())
		}
		out[i] = s
	}
	return out
}

// readRecords reads a .jsonl file (one object per line) or a .json array.
func readRecords(tb testing.TB, dataset, file string) []map[string]any {
	tb.Helper()
	dir, err := datapath.Dataset(dataset)
	if err == nil {
		_, err = os.Stat(dir)
	}
	if err != nil {
		msg := "shared data: " + err.Error()
		if os.Getenv("CI") == "true" {
			tb.Fatal(msg)
		}
		tb.Skip(msg)
	}
	path := filepath.Join(dir, file)
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var recs []map[string]any
	if strings.HasSuffix(file, ".jsonl") {
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				tb.Fatalf("%s: %v", path, err)
			}
			recs = append(recs, m)
		}
		if err := sc.Err(); err != nil {
			tb.Fatal(err)
		}
		return recs
	}
	if err := json.NewDecoder(f).Decode(&recs); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return recs
}
