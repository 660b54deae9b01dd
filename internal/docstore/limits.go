package docstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/errs"
)

// Limits bound a write; what exceeds them is refused with TooLarge.
type Limits struct {
	MaxBatch         int // documents (or ids) per call
	MaxIDBytes       int
	MaxTitleChars    int
	MaxTextChars     int
	MaxMetadataBytes int
}

// DefaultLimits: batches of 256, ids of 256 bytes, titles of 1,000 and
// texts of 100,000 characters, metadata of 16 KiB.
func DefaultLimits() Limits {
	return Limits{MaxBatch: 256, MaxIDBytes: 256, MaxTitleChars: 1000, MaxTextChars: 100_000, MaxMetadataBytes: 16 << 10}
}

// check validates document i and returns it normalised (id trimmed,
// metadata compacted), or why it is rejected.
func (l Limits) check(i int, d Input) (Input, *Rejection) {
	field := func(name string) string { return fmt.Sprintf("documents[%d].%s", i, name) }
	bad := func(name string, code errs.Code, format string, args ...any) *Rejection {
		return &Rejection{Field: field(name), Code: code, Reason: field(name) + ": " + fmt.Sprintf(format, args...)}
	}
	d.ID = strings.TrimSpace(d.ID)
	switch {
	case d.ID == "":
		return d, bad("id", errs.Invalid, "must not be empty")
	case len(d.ID) > l.MaxIDBytes:
		return d, bad("id", errs.TooLarge, "%d bytes, the limit is %d", len(d.ID), l.MaxIDBytes)
	case !utf8.ValidString(d.ID) || strings.ContainsFunc(d.ID, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '/' }):
		return d, bad("id", errs.Invalid, "must be valid UTF-8 without control characters or '/'")
	}
	for _, f := range []struct {
		name, v string
		limit   int
	}{{"title", d.Title, l.MaxTitleChars}, {"text", d.Text, l.MaxTextChars}} {
		if !utf8.ValidString(f.v) {
			return d, bad(f.name, errs.Invalid, "is not valid UTF-8")
		}
		if n := utf8.RuneCountInString(f.v); n > f.limit {
			return d, bad(f.name, errs.TooLarge, "%d characters, the limit is %d", n, f.limit)
		}
	}
	if strings.TrimSpace(d.Title) == "" && strings.TrimSpace(d.Text) == "" {
		return d, bad("text", errs.Invalid, "a document needs a title or a text")
	}
	if len(d.Metadata) > 0 {
		m := bytes.TrimSpace(d.Metadata)
		if bytes.Equal(m, []byte("null")) {
			d.Metadata = nil
			return d, nil
		}
		if len(m) > l.MaxMetadataBytes {
			return d, bad("metadata", errs.TooLarge, "%d bytes, the limit is %d", len(m), l.MaxMetadataBytes)
		}
		var obj map[string]any
		if len(m) == 0 || m[0] != '{' || json.Unmarshal(m, &obj) != nil {
			return d, bad("metadata", errs.Invalid, "must be a JSON object")
		}
		var b bytes.Buffer
		if err := json.Compact(&b, m); err != nil {
			return d, bad("metadata", errs.Invalid, "must be a JSON object")
		}
		d.Metadata = b.Bytes()
	}
	return d, nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func joinList(xs []string) string { return strings.Join(xs, ", ") }
