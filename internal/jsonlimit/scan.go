package jsonlimit

import (
	"unicode/utf16"
	"unicode/utf8"
)

// The lexical part of the check: RFC 8259's grammar, as strict as
// encoding/json (which accepts invalid UTF-8 in strings and replaces it).

func (c *checker) ws() {
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// str reads a string at its opening quote and returns the bytes between
// the quotes and whether they hold an escape.
func (c *checker) str() ([]byte, bool, error) {
	c.i++
	start := c.i
	esc := false
	for c.i < len(c.b) {
		switch ch := c.b[c.i]; {
		case ch == '"':
			c.i++
			return c.b[start : c.i-1], esc, nil
		case ch == '\\':
			esc = true
			if c.i+1 >= len(c.b) {
				c.i = len(c.b)
				return nil, false, c.syntax("unexpected end of input")
			}
			switch c.b[c.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				c.i += 2
			case 'u':
				c.i += 2
				for k := 0; k < 4; k++ {
					if c.i == len(c.b) {
						return nil, false, c.syntax("unexpected end of input")
					}
					if HexDigit(c.b[c.i]) < 0 {
						return nil, false, c.syntax("bad \\u escape in a string")
					}
					c.i++
				}
			default:
				c.i++
				return nil, false, c.syntax("bad escape \\" + c.char() + " in a string")
			}
		case ch < 0x20:
			return nil, false, c.syntax("control character " + c.char() + " in a string (escape it)")
		default:
			c.i++
		}
	}
	return nil, false, c.syntax("unexpected end of input")
}

// number reads a number and returns its literal.
func (c *checker) number() ([]byte, error) {
	start := c.i
	digits := func() bool {
		n := c.i
		for c.i < len(c.b) && '0' <= c.b[c.i] && c.b[c.i] <= '9' {
			c.i++
		}
		return c.i > n
	}
	if c.b[c.i] == '-' {
		c.i++
	}
	switch {
	case c.i < len(c.b) && c.b[c.i] == '0':
		c.i++
	case !digits():
		return nil, c.syntax("want a digit, got " + c.char())
	}
	if c.i < len(c.b) && c.b[c.i] == '.' {
		c.i++
		if !digits() {
			return nil, c.syntax("want a digit after '.', got " + c.char())
		}
	}
	if c.i < len(c.b) && (c.b[c.i] == 'e' || c.b[c.i] == 'E') {
		c.i++
		if c.i < len(c.b) && (c.b[c.i] == '+' || c.b[c.i] == '-') {
			c.i++
		}
		if !digits() {
			return nil, c.syntax("want a digit in the exponent, got " + c.char())
		}
	}
	return c.b[start:c.i], nil
}

func (c *checker) literal(w string) error {
	for k := 0; k < len(w); k++ {
		if c.i == len(c.b) {
			return c.syntax("unexpected end of input")
		}
		if c.b[c.i] != w[k] {
			return c.syntax("want " + w + ", got " + c.char())
		}
		c.i++
	}
	return nil
}

// HexDigit is the value of a hex digit, -1 for another byte.
func HexDigit(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

// hex4 reads the four hex digits of a \u escape (str has checked them).
func hex4(b []byte) rune {
	return HexDigit(b[0])<<12 | HexDigit(b[1])<<8 | HexDigit(b[2])<<4 | HexDigit(b[3])
}

// exact reports whether a string's raw content (between the quotes, as
// str checked it) decodes without a replacement character: its bytes are
// valid UTF-8 and every surrogate escape is half of a pair.
func exact(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		if raw[i] != 'u' {
			continue
		}
		r := hex4(raw[i+1:])
		i += 4
		if !utf16.IsSurrogate(r) {
			continue
		}
		if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' && utf16.DecodeRune(r, hex4(raw[i+3:])) != utf8.RuneError {
			i += 6
			continue
		}
		return false
	}
	return true
}

// Unescape decodes the escapes of a JSON string's content (between the
// quotes, its escapes well formed) as encoding/json does: a lone surrogate
// or invalid UTF-8 becomes U+FFFD.
func Unescape(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		ch := raw[i]
		if ch < utf8.RuneSelf && ch != '\\' {
			out = append(out, ch)
			i++
			continue
		}
		if ch != '\\' {
			r, n := utf8.DecodeRune(raw[i:])
			out = utf8.AppendRune(out, r)
			i += n
			continue
		}
		switch raw[i+1] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if r2 := utf16.DecodeRune(r, hex4(raw[i+2:])); r2 != utf8.RuneError {
						out = utf8.AppendRune(out, r2)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default: // '"', '\\', '/'
			out = append(out, raw[i+1])
		}
		i += 2
	}
	return out
}
