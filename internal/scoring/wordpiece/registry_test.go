package wordpiece_test

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/scoring/wordpiece"
	"github.com/dmar-kg/dmar/internal/testfile"
)

// testdata/registry_tokens.json holds the ids the Hugging Face tokenizers
// library gives with the registry encoders' tokenizer.json (one file, shared
// by the three langchain4j jars) for tricky and about 300 real inputs, with
// the query and passage prefixes and at 512 and 128 positions; see
// models/encoder/reference_registry.py.
func TestRegistryTokenizersMatchReference(t *testing.T) {
	var fix struct {
		TokenizerSHA256 string `json:"tokenizer_sha256"`
		Items           []struct {
			onnxtest.Item
			Prefix string  `json:"prefix"`
			MaxLen int     `json:"max_len"`
			IDs    []int64 `json:"ids"`
		} `json:"items"`
	}
	onnxtest.ReadFixture(t, "testdata/registry_tokens.json", &fix)
	var texts []string
	for _, name := range []string{"bge-small-en-v1.5", "bge-small-en-v1.5-int8", "e5-small-v2-int8"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(onnxtest.CacheDir(), "models", name, "tokenizer.json")
			onnxtest.NeedFile(t, path, name+"'s tokenizer.json (DMAR_ENCODERS=all scripts/setup.sh)")
			raw := testfile.Read(t, path)
			if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != fix.TokenizerSHA256 {
				t.Fatalf("%s changed since the fixture was computed; rerun models/encoder/reference_registry.py", path)
			}
			tok, err := wordpiece.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if texts == nil {
				texts = onnxtest.TextsOf(t, fix.Items)
			}
			truncated, bad := 0, 0
			for i, it := range fix.Items {
				s := it.Prefix + strings.TrimFunc(texts[i], unicode.IsSpace)
				got := tok.Encode(s, it.MaxLen)
				if !slices.Equal(got, it.IDs) {
					bad++
					if bad <= 5 {
						t.Errorf("%s (prefix %q, max %d):\n got  %v\n want %v", it.Label(), it.Prefix, it.MaxLen, got, it.IDs)
					}
				}
				if len(it.IDs) == it.MaxLen {
					truncated++
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d encodings differ", bad, len(fix.Items))
			}
			if truncated < 50 || len(fix.Items) < 300 {
				t.Errorf("fixture has %d items, %d truncated: too weak", len(fix.Items), truncated)
			}
			t.Logf("%d encodings identical to the reference, %d of them truncated", len(fix.Items), truncated)
		})
	}
}
