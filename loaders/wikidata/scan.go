package wikidata

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/jsonlimit"
)

// scanner is a small validating JSON reader over one dump line. It decodes
// only the strings the loader keeps and skips everything else (sitelinks,
// qualifiers, references, other languages) without allocating, which is what
// makes the loader several times faster than encoding/json on dump lines.
// It checks structure, escapes and literals; it is more lenient than
// encoding/json in two ways that real dumps never exercise: number grammar
// is not checked beyond the characters allowed in numbers, and raw control
// characters inside strings without escapes are accepted.
type scanner struct {
	b     []byte
	i     int
	depth int
}

const maxDepth = 512

var errTruncated = errors.New("unexpected end of line (truncated entity?)")

func (s *scanner) errf(format string, args ...any) error {
	return fmt.Errorf("at column %d: %s", s.i+1, fmt.Sprintf(format, args...))
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i >= len(s.b) {
		return 0
	}
	return s.b[s.i]
}

func (s *scanner) expect(c byte) error {
	s.ws()
	if s.i >= len(s.b) {
		return errTruncated
	}
	if s.b[s.i] != c {
		return s.errf("want %q, got %q", c, s.b[s.i])
	}
	s.i++
	return nil
}

// rawString consumes a string and returns its bytes between the quotes and
// whether it holds escapes.
func (s *scanner) rawString() ([]byte, bool, error) {
	if err := s.expect('"'); err != nil {
		return nil, false, err
	}
	start := s.i
	// Fast path: most strings have no escapes; find the closing quote with
	// IndexByte (vectorised) and check the span holds no backslash.
	if q := bytes.IndexByte(s.b[start:], '"'); q >= 0 && bytes.IndexByte(s.b[start:start+q], '\\') < 0 {
		s.i = start + q + 1
		return s.b[start : start+q], false, nil
	}
	esc := false
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[start:s.i]
			s.i++
			return raw, esc, nil
		case c == '\\':
			esc = true
			if s.i+1 >= len(s.b) {
				return nil, false, errTruncated
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return nil, false, errTruncated
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if jsonlimit.HexDigit(h) < 0 {
						return nil, false, s.errf("bad \\u escape")
					}
				}
				s.i += 6
			default:
				return nil, false, s.errf("bad escape \\%c", s.b[s.i+1])
			}
		case c < 0x20:
			return nil, false, s.errf("control character in string")
		default:
			s.i++
		}
	}
	return nil, false, errTruncated
}

// str consumes a string and decodes it.
func (s *scanner) str() (string, error) {
	raw, esc, err := s.rawString()
	if err != nil {
		return "", err
	}
	if !esc {
		return validUTF8(raw), nil
	}
	return string(jsonlimit.Unescape(raw)), nil
}

// validUTF8 copies raw into a string, replacing invalid UTF-8 as encoding/json does.
func validUTF8(raw []byte) string {
	if utf8.Valid(raw) {
		return string(raw)
	}
	out := make([]rune, 0, len(raw))
	for len(raw) > 0 {
		r, n := utf8.DecodeRune(raw)
		out = append(out, r)
		raw = raw[n:]
	}
	return string(out)
}

// skip consumes one value of any kind.
func (s *scanner) skip() error {
	switch c := s.peek(); c {
	case 0:
		return errTruncated
	case '"':
		_, _, err := s.rawString()
		return err
	case '{':
		return s.object(func([]byte) error { return s.skip() })
	case '[':
		return s.array(s.skip)
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			start := s.i
			for s.i < len(s.b) {
				switch c := s.b[s.i]; {
				case '0' <= c && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
					s.i++
					continue
				}
				break
			}
			if s.i == start+1 && c == '-' {
				return s.errf("bad number")
			}
			return nil
		}
		return s.errf("unexpected %q", c)
	}
}

func (s *scanner) literal(w string) error {
	if len(s.b)-s.i < len(w) {
		return errTruncated
	}
	if string(s.b[s.i:s.i+len(w)]) != w {
		return s.errf("bad literal")
	}
	s.i += len(w)
	return nil
}

// object consumes an object, calling fn for each key with the scanner placed
// on the value; fn must consume the value. The key slice is only valid
// during the call and is raw (escapes not decoded).
func (s *scanner) object(fn func(key []byte) error) error {
	if err := s.expect('{'); err != nil {
		return err
	}
	s.depth++
	if s.depth > maxDepth {
		return s.errf("nesting too deep")
	}
	defer func() { s.depth-- }()
	if s.peek() == '}' {
		s.i++
		return nil
	}
	for {
		key, esc, err := s.rawString()
		if err != nil {
			return err
		}
		if esc {
			key = jsonlimit.Unescape(key)
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if err := fn(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		case 0:
			return errTruncated
		default:
			return s.errf("want ',' or '}' in object")
		}
	}
}

// array consumes an array, calling fn for each element.
func (s *scanner) array(fn func() error) error {
	if err := s.expect('['); err != nil {
		return err
	}
	s.depth++
	if s.depth > maxDepth {
		return s.errf("nesting too deep")
	}
	defer func() { s.depth-- }()
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if err := fn(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return nil
		case 0:
			return errTruncated
		default:
			return s.errf("want ',' or ']' in array")
		}
	}
}

// objectOrEmpty is object, but also accepts the empty array the dumps write
// for an empty map ("labels":[]).
func (s *scanner) objectOrEmpty(fn func(key []byte) error) error {
	if s.peek() == '[' {
		return s.array(func() error { return s.errf("want an object or []") })
	}
	return s.object(fn)
}
