package wordpiece

import (
	"slices"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/testfile"
)

// testdata/tiny.json is a hand-written BERT tokenizer with a 26-entry
// vocabulary, so the rules can be checked without the real model.
func tiny(t *testing.T) *Tokenizer {
	t.Helper()
	tok, err := Load("testdata/tiny.json")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestTokens(t *testing.T) {
	tok := tiny(t)
	tests := []struct {
		name, in string
		want     []string
	}{
		{"lower and punctuation", "Hello, World!", []string{"hello", ",", "world", "!"}},
		{"sub-words", "unaffable", []string{"un", "##aff", "##able"}},
		{"greedy longest first", "ab", []string{"a", "##b"}},
		{"accents stripped", "Café NAÏVE", []string{"cafe", "naive"}},
		{"composed vs decomposed accents", "cafe\u0301", []string{"cafe"}},
		{"unknown word", "hello zebra", []string{"hello", "[UNK]"}},
		{"unmatched rest makes the whole word unknown", "unaffx", []string{"[UNK]"}},
		{"CJK characters split", "你的", []string{"[UNK]", "的"}},
		{"CJK inside a word", "a的a", []string{"a", "的", "a"}},
		{"ASCII symbol is punctuation", "$1", []string{"$", "1"}},
		{"digits as sub-words", "12", []string{"1", "##2"}},
		{"apostrophe and hyphen split", "world's un-aff", []string{"world", "'", "s", "un", "-", "[UNK]"}},
		{"controls removed", "hel\x00lo wor\u200bld\u00ad", []string{"hello", "world"}},
		{"odd whitespace separates", "hello\tworld\u00a0hello\u3000world\nhello", []string{"hello", "world", "hello", "world", "hello"}},
		{"vertical tab is a control, removed", "hel\vlo", []string{"hello"}},
		{"special token kept whole", "hello [MASK] world", []string{"hello", "[MASK]", "world"}},
		{"special token glued to text", "hello[MASK]world", []string{"hello", "[MASK]", "world"}},
		{"special tokens match case-sensitively", "[mask]", []string{"[", "[UNK]", "]"}},
		{"word over the length limit", "hello aaaaaaaaaaaaa", []string{"hello", "[UNK]"}},
		{"word at the length limit", "aaaaaaaaaaaa", []string{"[UNK]"}}, // "##a" is not in the vocabulary
		{"empty", "", nil},
		{"only spaces", "  \t ", nil},
		{"emoji is unknown", "hello 🙂", []string{"hello", "[UNK]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tok.Tokens(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEncodeTruncates(t *testing.T) {
	tok := tiny(t)
	tests := []struct {
		in     string
		maxLen int
		want   []int64
	}{
		{"hello world hello", 0, []int64{2, 5, 6, 5, 3}},
		{"hello world hello", 5, []int64{2, 5, 6, 5, 3}},
		{"hello world hello", 4, []int64{2, 5, 6, 3}},
		{"hello world hello", 2, []int64{2, 3}},
		{"unaffable", 3, []int64{2, 7, 3}}, // truncation can cut a word's pieces
		{"", 8, []int64{2, 3}},
	}
	for _, tt := range tests {
		if got := tok.Encode(tt.in, tt.maxLen); !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%q, %d) = %v, want %v", tt.in, tt.maxLen, got, tt.want)
		}
	}
}

func TestEncodeBatchPadsWithMasks(t *testing.T) {
	tok := tiny(t)
	b := tok.EncodeBatch([]string{"hello", "unaffable world", ""}, 0)
	if b.Rows != 3 || b.Cols != 6 {
		t.Fatalf("batch is %dx%d, want 3x6", b.Rows, b.Cols)
	}
	wantIDs := []int64{
		2, 5, 3, 0, 0, 0,
		2, 7, 8, 9, 6, 3,
		2, 3, 0, 0, 0, 0,
	}
	wantMask := []int64{
		1, 1, 1, 0, 0, 0,
		1, 1, 1, 1, 1, 1,
		1, 1, 0, 0, 0, 0,
	}
	if !slices.Equal(b.IDs, wantIDs) || !slices.Equal(b.Mask, wantMask) {
		t.Errorf("EncodeBatch:\n ids  %v\n want %v\n mask %v\n want %v", b.IDs, wantIDs, b.Mask, wantMask)
	}
}

func TestParseRejectsOtherPipelines(t *testing.T) {
	data := testfile.Read(t, "testdata/tiny.json")
	s := string(data)
	tests := []struct {
		name, old, new, want string
	}{
		{"model", `"type": "WordPiece"`, `"type": "BPE"`, "BPE"},
		{"normalizer", `"type": "BertNormalizer"`, `"type": "NFC"`, "normalizer"},
		{"pre-tokenizer", `"type": "BertPreTokenizer"`, `"type": "Whitespace"`, "pre_tokenizer"},
		{"unk", `"unk_token": "[UNK]"`, `"unk_token": "<unk>"`, "<unk>"},
		{"not json", `{`, `[`, "tokenizer.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(s, tt.old) {
				t.Fatalf("fixture lacks %s", tt.old)
			}
			_, err := Parse([]byte(strings.Replace(s, tt.old, tt.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse = %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}
