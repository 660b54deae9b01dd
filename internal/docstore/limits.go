package docstore

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/jsonlimit"
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

// CheckID is the one rule for a document id, in a write, a delete or a
// path: not empty, at most MaxIDBytes, valid UTF-8, no control character
// or '/', and no whitespace at either end. An id is kept exactly as sent,
// never trimmed or repaired, so two different ids never become one. It
// returns the error's code and the reason, or "" when id is good.
func (l Limits) CheckID(id string) (errs.Code, string) {
	switch {
	case id == "":
		return errs.Invalid, "must not be empty"
	case len(id) > l.MaxIDBytes:
		return errs.TooLarge, fmt.Sprintf("%d bytes, the limit is %d", len(id), l.MaxIDBytes)
	case !utf8.ValidString(id):
		return errs.Invalid, "must be valid UTF-8"
	case strings.ContainsFunc(id, func(r rune) bool { return unicode.IsControl(r) || r == '/' }):
		return errs.Invalid, "must not hold control characters or '/'"
	case strings.TrimSpace(id) != id:
		return errs.Invalid, "must not begin or end with whitespace (ids are kept exactly as sent)"
	}
	return "", ""
}

// check validates document i and returns it normalised (metadata
// compacted), or why it is rejected.
func (l Limits) check(i int, d Input) (Input, *Rejection) {
	field := func(name string) string { return fmt.Sprintf("documents[%d].%s", i, name) }
	bad := func(name string, code errs.Code, format string, args ...any) *Rejection {
		return &Rejection{Field: field(name), Code: code, Reason: field(name) + ": " + fmt.Sprintf(format, args...)}
	}
	if code, why := l.CheckID(d.ID); why != "" {
		return d, bad("id", code, "%s", why)
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
		if !utf8.Valid(m) {
			return d, bad("metadata", errs.Invalid, "is not valid UTF-8")
		}
		// The request decoder checked a body's metadata already; a Go
		// caller's gets the same check here, with the same messages.
		if err := jsonlimit.Check(m, metadataType, jsonlimit.Rules{Prefix: field("metadata")}); err != nil {
			e, _ := errs.As(err)
			return d, &Rejection{Field: cmp.Or(e.Field, field("metadata")), Code: errs.Invalid, Reason: e.Message}
		}
		var b bytes.Buffer
		if err := json.Compact(&b, m); err != nil {
			return d, bad("metadata", errs.Invalid, "must be a JSON object")
		}
		d.Metadata = b.Bytes()
	}
	return d, nil
}

var metadataType = reflect.TypeFor[map[string]any]()

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
