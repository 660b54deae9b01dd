// Package wordpiece reproduces a BERT tokenizer described by a Hugging Face
// tokenizer.json (BertNormalizer, BertPreTokenizer, WordPiece model and the
// [CLS] ... [SEP] template) so that Go produces the token ids the model was
// trained with: cleaning, CJK spacing, lower-casing, accent stripping,
// punctuation splitting, greedy longest-match-first sub-words with "##",
// [UNK], special tokens written literally in the text, truncation, and
// padded batches with attention masks.
package wordpiece

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer is immutable after Load and safe for concurrent use.
type Tokenizer struct {
	vocab      map[string]int64
	unk        string
	unkID      int64
	prefix     string // continuing sub-word prefix, "##"
	maxChars   int    // longer words become [UNK]
	cls, sep   int64
	padID      int64
	clean      bool
	chinese    bool
	strip      bool
	lower      bool
	special    []string // added tokens matched in raw text, longest first
	specialIDs map[string]int64
}

type fileFormat struct {
	AddedTokens []struct {
		ID         int64  `json:"id"`
		Content    string `json:"content"`
		Normalized bool   `json:"normalized"`
	} `json:"added_tokens"`
	Normalizer *struct {
		Type         string `json:"type"`
		CleanText    bool   `json:"clean_text"`
		ChineseChars bool   `json:"handle_chinese_chars"`
		StripAccents *bool  `json:"strip_accents"`
		Lowercase    bool   `json:"lowercase"`
	} `json:"normalizer"`
	PreTokenizer *struct {
		Type string `json:"type"`
	} `json:"pre_tokenizer"`
	PostProcessor *struct {
		Type          string `json:"type"`
		SpecialTokens map[string]struct {
			IDs []int64 `json:"ids"`
		} `json:"special_tokens"`
	} `json:"post_processor"`
	Padding *struct {
		PadID int64 `json:"pad_id"`
	} `json:"padding"`
	Model struct {
		Type     string           `json:"type"`
		UnkToken string           `json:"unk_token"`
		Prefix   string           `json:"continuing_subword_prefix"`
		MaxChars int              `json:"max_input_chars_per_word"`
		Vocab    map[string]int64 `json:"vocab"`
	} `json:"model"`
}

// Load reads a tokenizer.json file.
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("wordpiece: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("wordpiece: %s: %w", path, err)
	}
	return t, nil
}

// Parse reads tokenizer.json content. It accepts only the BERT pipeline
// it implements and names whatever else it finds.
func Parse(data []byte) (*Tokenizer, error) {
	var f fileFormat
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	if f.Model.Type != "WordPiece" {
		return nil, fmt.Errorf("model type %q: only WordPiece is supported", f.Model.Type)
	}
	if f.Normalizer == nil || f.Normalizer.Type != "BertNormalizer" {
		return nil, fmt.Errorf("normalizer %s: only BertNormalizer is supported", typeName(f.Normalizer))
	}
	if f.PreTokenizer == nil || f.PreTokenizer.Type != "BertPreTokenizer" {
		return nil, fmt.Errorf("pre_tokenizer %s: only BertPreTokenizer is supported", typeName(f.PreTokenizer))
	}
	if len(f.Model.Vocab) == 0 {
		return nil, fmt.Errorf("empty vocabulary")
	}
	t := &Tokenizer{
		vocab:      f.Model.Vocab,
		unk:        f.Model.UnkToken,
		prefix:     f.Model.Prefix,
		maxChars:   f.Model.MaxChars,
		clean:      f.Normalizer.CleanText,
		chinese:    f.Normalizer.ChineseChars,
		lower:      f.Normalizer.Lowercase,
		specialIDs: map[string]int64{},
	}
	// strip_accents: null means "follow lowercase", as in BERT uncased.
	t.strip = t.lower
	if f.Normalizer.StripAccents != nil {
		t.strip = *f.Normalizer.StripAccents
	}
	if t.maxChars <= 0 {
		t.maxChars = 100
	}
	var ok bool
	if t.unkID, ok = t.vocab[t.unk]; !ok {
		return nil, fmt.Errorf("unk_token %q is not in the vocabulary", t.unk)
	}
	if t.cls, ok = t.templateID(f, "[CLS]"); !ok {
		return nil, fmt.Errorf("no [CLS] token")
	}
	if t.sep, ok = t.templateID(f, "[SEP]"); !ok {
		return nil, fmt.Errorf("no [SEP] token")
	}
	if f.Padding != nil {
		t.padID = f.Padding.PadID
	} else if id, ok := t.vocab["[PAD]"]; ok {
		t.padID = id
	}
	for _, a := range f.AddedTokens {
		if a.Normalized {
			return nil, fmt.Errorf("added token %q is normalized: not supported", a.Content)
		}
		t.special = append(t.special, a.Content)
		t.specialIDs[a.Content] = a.ID
	}
	// Leftmost-longest matching: try longer tokens first.
	sort.Slice(t.special, func(i, j int) bool { return len(t.special[i]) > len(t.special[j]) })
	return t, nil
}

func typeName[T any](p *T) string {
	if p == nil {
		return "missing"
	}
	b, _ := json.Marshal(p)
	return string(b)
}

func (t *Tokenizer) templateID(f fileFormat, tok string) (int64, bool) {
	if f.PostProcessor != nil {
		if st, ok := f.PostProcessor.SpecialTokens[tok]; ok && len(st.IDs) == 1 {
			return st.IDs[0], true
		}
	}
	id, ok := t.vocab[tok]
	return id, ok
}

// Tokens returns the word pieces of text, without [CLS]/[SEP] and without
// truncation.
func (t *Tokenizer) Tokens(text string) []string {
	var out []string
	t.each(text, func(piece string, _ int64) bool {
		out = append(out, piece)
		return true
	})
	return out
}

// Encode returns the ids of [CLS] text [SEP], the text's pieces truncated so
// that the whole has at most maxLen ids (maxLen >= 2; 0 means no limit).
func (t *Tokenizer) Encode(text string, maxLen int) []int64 {
	ids := []int64{t.cls}
	room := maxLen - 2
	t.each(text, func(_ string, id int64) bool {
		if maxLen > 0 && len(ids)-1 >= room {
			return false
		}
		ids = append(ids, id)
		return true
	})
	return append(ids, t.sep)
}

// Batch is a padded batch, row-major: row i is IDs[i*Cols:(i+1)*Cols].
type Batch struct {
	IDs  []int64
	Mask []int64 // 1 for real tokens, 0 for padding
	Rows int
	Cols int // the longest row's length
}

// EncodeBatch encodes texts (see Encode) and pads them to the longest.
func (t *Tokenizer) EncodeBatch(texts []string, maxLen int) Batch {
	rows := make([][]int64, len(texts))
	cols := 0
	for i, s := range texts {
		rows[i] = t.Encode(s, maxLen)
		cols = max(cols, len(rows[i]))
	}
	b := Batch{IDs: make([]int64, len(texts)*cols), Mask: make([]int64, len(texts)*cols), Rows: len(texts), Cols: cols}
	for i, r := range rows {
		for j := range cols {
			if j < len(r) {
				b.IDs[i*cols+j] = r[j]
				b.Mask[i*cols+j] = 1
			} else {
				b.IDs[i*cols+j] = t.padID
			}
		}
	}
	return b
}

// each calls yield with every piece of text and its id until yield returns
// false. Special tokens written in the raw text (e.g. "[MASK]") are kept
// whole; the text between them is normalised, pre-tokenised and split.
func (t *Tokenizer) each(text string, yield func(string, int64) bool) {
	for text != "" {
		i, tok := t.nextSpecial(text)
		for _, word := range t.preTokenize(t.normalize(text[:i])) {
			if !t.wordPieces(word, yield) {
				return
			}
		}
		if tok == "" {
			return
		}
		if !yield(tok, t.specialIDs[tok]) {
			return
		}
		text = text[i+len(tok):]
	}
}

// nextSpecial finds the leftmost (then longest) special token in s; it
// returns len(s), "" when there is none.
func (t *Tokenizer) nextSpecial(s string) (int, string) {
	for i := 0; i < len(s); i++ {
		for _, tok := range t.special {
			if strings.HasPrefix(s[i:], tok) {
				return i, tok
			}
		}
	}
	return len(s), ""
}

func (t *Tokenizer) normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if t.clean {
			if r == 0 || r == utf8.RuneError || isControl(r) {
				continue
			}
			if isWhitespace(r) {
				r = ' '
			}
		}
		if t.chinese && isCJK(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	s = b.String()
	if t.strip {
		d := norm.NFD.String(s)
		b.Reset()
		for _, r := range d {
			if !unicode.Is(unicode.Mn, r) {
				b.WriteRune(r)
			}
		}
		s = b.String()
	}
	if t.lower {
		b.Reset()
		for _, r := range s {
			if r == 'İ' { // the one unconditional multi-rune lower-case mapping
				b.WriteString("i\u0307")
				continue
			}
			b.WriteRune(unicode.ToLower(r))
		}
		s = b.String()
	}
	return s
}

// preTokenize splits on whitespace and isolates every punctuation character.
func (t *Tokenizer) preTokenize(s string) []string {
	var words []string
	start := -1
	for i, r := range s {
		switch {
		case isWhitespace(r):
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
		case isPunct(r):
			if start >= 0 {
				words = append(words, s[start:i])
				start = -1
			}
			words = append(words, s[i:i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		words = append(words, s[start:])
	}
	return words
}

// wordPieces splits one word greedily, longest vocabulary match first; a
// word with an unmatched rest, or longer than maxChars, is one [UNK].
func (t *Tokenizer) wordPieces(word string, yield func(string, int64) bool) bool {
	if utf8.RuneCountInString(word) > t.maxChars {
		return yield(t.unk, t.unkID)
	}
	type piece struct {
		s  string
		id int64
	}
	var pieces []piece
	for start := 0; start < len(word); {
		end := len(word)
		found := false
		for start < end {
			sub := word[start:end]
			if start > 0 {
				sub = t.prefix + sub
			}
			if id, ok := t.vocab[sub]; ok {
				pieces = append(pieces, piece{sub, id})
				found = true
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if !found {
			return yield(t.unk, t.unkID)
		}
		start = end
	}
	for _, p := range pieces {
		if !yield(p.s, p.id) {
			return false
		}
	}
	return true
}

// isWhitespace: tab, newline and carriage return count as whitespace, as do
// characters with the Unicode White_Space property.
func isWhitespace(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.White_Space, r)
}

// isControl: the "other" categories (Cc, Cf, Cs, Co, unassigned), except the
// whitespace controls.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	return unicode.Is(unicode.C, r) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)
}

// isPunct: ASCII punctuation (which includes symbols such as $ + < = > ^ ` | ~)
// and the Unicode punctuation categories.
func isPunct(r rune) bool {
	if r >= 33 && r <= 47 || r >= 58 && r <= 64 || r >= 91 && r <= 96 || r >= 123 && r <= 126 {
		return true
	}
	return unicode.IsPunct(r)
}

// isCJK: the CJK Unified Ideographs blocks BERT surrounds with spaces.
func isCJK(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B820 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}

// PadID is the id of the padding token.
func (t *Tokenizer) PadID() int64 { return t.padID }
