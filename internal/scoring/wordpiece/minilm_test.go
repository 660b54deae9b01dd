package wordpiece_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/scoring/wordpiece"
)

// testdata/minilm_tokens.json holds the ids the reference (Hugging Face)
// tokenizer gives for tricky and real inputs, truncated at the model's
// limit; see models/encoder/reference_embeddings.py.
func TestMatchesReferenceTokenizer(t *testing.T) {
	path := filepath.Join(onnxtest.MiniLMDir(), "tokenizer.json")
	onnxtest.NeedFile(t, path, "the encoder's tokenizer.json")
	tok, err := wordpiece.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var fix struct {
		MaxSeqLength int `json:"max_seq_length"`
		Items        []struct {
			onnxtest.Item
			IDs            []int64 `json:"ids"`
			UntruncatedLen int     `json:"untruncated_len"`
		} `json:"items"`
	}
	onnxtest.ReadFixture(t, "testdata/minilm_tokens.json", &fix)
	texts := onnxtest.TextsOf(t, fix.Items)
	truncated := 0
	for i, it := range fix.Items {
		s := strings.TrimFunc(texts[i], unicode.IsSpace)
		if got := tok.Encode(s, fix.MaxSeqLength); !slices.Equal(got, it.IDs) {
			t.Errorf("%s:\n got  %v\n want %v", it.Label(), got, it.IDs)
		}
		if got := len(tok.Encode(s, 0)); got != it.UntruncatedLen {
			t.Errorf("%s: %d ids untruncated, want %d", it.Label(), got, it.UntruncatedLen)
		}
		if it.UntruncatedLen > fix.MaxSeqLength {
			truncated++
		}
	}
	if truncated == 0 || len(fix.Items) < 30 {
		t.Errorf("fixture has %d items, %d truncated: too weak", len(fix.Items), truncated)
	}
}
