// Package jsonlimit checks a JSON document against the Go type it will be
// decoded into, in one streaming pass that stops at the first problem: a
// syntax error, a key that is not one of the type's JSON names in exact
// case or that repeats, a null, a value of the wrong type, a number out of
// range, nesting deeper than the rules allow, an array longer than they
// allow, or a string that would not decode exactly. Each refusal is an
// *errs.Error naming the field with its indices (documents[3].id).
//
// The pass keeps one frame per open object or array and refuses the nesting
// as soon as it passes the limit; it allocates nothing per value beyond the
// keys of objects of more than a few members (to see a repeat) and escaped
// keys. Time and memory are therefore linear in the document with a small
// constant, and a document that passes decodes with encoding/json without
// an error, in linear time too, since its nesting is bounded.
package jsonlimit

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/errs"
)

// Rules bound a document.
type Rules struct {
	// MaxDepth bounds the nesting of the whole document (its outer object
	// or array is level 1); 0 means DefaultMaxDepth.
	MaxDepth int
	// MaxFreeDepth bounds the nesting inside a free-form value (a
	// json.RawMessage, an interface or a map of interfaces): the value's own
	// object or array is level 1. 0 means DefaultMaxFreeDepth.
	MaxFreeDepth int
	// MaxFreeBytes, when set, bounds the bytes of a free-form value as
	// sent; past it the check stops with a TooLarge error.
	MaxFreeBytes int
	// MaxItems bounds arrays by pattern: the JSON names of typed fields
	// joined with "." and "[]" for an element, as "documents" or
	// "filter.ids". Past the bound the check stops with a TooLarge error.
	MaxItems map[string]int
	// Exact names the string values (by pattern, as "documents[].id" or
	// "ids[]") that must decode exactly: valid UTF-8 and no lone surrogate
	// escape, either of which encoding/json would replace with U+FFFD.
	Exact map[string]bool
	// Prefix is put before every field the errors name (as
	// "documents[2].metadata"); empty for a request body.
	Prefix string
}

// The default bounds: options bodies are a few levels deep, and 32 levels
// inside a free-form value is more than any metadata needs.
const (
	DefaultMaxDepth     = 64
	DefaultMaxFreeDepth = 32
)

// smallObject is how many keys an object's repeat check compares one by
// one before it builds a set.
const smallObject = 16

// frame is an open object or array.
type frame struct {
	obj     bool
	n       int          // members or elements begun
	t       reflect.Type // the container's type; nil inside a free-form value
	free    int          // nesting inside a free-form value (0: typed)
	fields  map[string]reflect.Type
	pattern string // of a typed container
	key     []byte // the member being read (objects)
	keys    int    // where the object's keys start in checker.keys
	max     int    // elements allowed (arrays; 0: any)
}

type checker struct {
	b     []byte
	i     int
	r     Rules
	stack []frame
	keys  []keyRef // the keys of the open objects (repeated)
	free  int      // where the free-form value being read starts; -1 outside one
}

// Check checks body against t, the type it decodes into (a struct, slice or
// map without custom unmarshalers).
func Check(body []byte, t reflect.Type, r Rules) error {
	if r.MaxDepth <= 0 {
		r.MaxDepth = DefaultMaxDepth
	}
	if r.MaxFreeDepth <= 0 {
		r.MaxFreeDepth = DefaultMaxFreeDepth
	}
	c := &checker{b: body, r: r, free: -1}
	want := kindName(t)
	c.ws()
	if c.i == len(c.b) {
		return c.named(r.Prefix, errs.Invalid, "is empty; send a JSON "+want)
	}
	// The root must be the container its type is: a body is an object.
	if open := c.b[c.i]; !(open == '{' && want == "object" || open == '[' && want == "array") {
		return c.named(r.Prefix, errs.Invalid, "must be a JSON "+want)
	}
	if err := c.value(t, ""); err != nil {
		return err
	}
	if err := c.members(); err != nil {
		return err
	}
	c.ws()
	if c.i < len(c.b) {
		return c.named(r.Prefix, errs.Invalid, "has data after the JSON "+want)
	}
	return nil
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "array"
	}
	return "object"
}

// members reads the open containers' members until the root closes.
func (c *checker) members() error {
	for len(c.stack) > 0 {
		f := &c.stack[len(c.stack)-1]
		closer := byte(']')
		if f.obj {
			closer = '}'
		}
		if c.free >= 0 && c.r.MaxFreeBytes > 0 && c.i-c.free > c.r.MaxFreeBytes {
			return c.failAt(errs.TooLarge, "over %d bytes, the limit", c.r.MaxFreeBytes)
		}
		c.ws()
		if c.i == len(c.b) {
			return c.syntax("unexpected end of input")
		}
		if c.b[c.i] == closer {
			c.i++
			if f.free == 1 {
				c.free = -1
			}
			if err := c.closeKeys(f); err != nil {
				return err
			}
			c.stack = c.stack[:len(c.stack)-1]
			continue
		}
		if f.n > 0 {
			if c.b[c.i] != ',' {
				return c.syntax(fmt.Sprintf("want ',' or '%c', got %s", closer, c.char()))
			}
			c.i++
			c.ws()
		}
		f.n++
		var t reflect.Type
		var pattern string
		if f.obj {
			var err error
			if t, pattern, err = c.member(f); err != nil {
				return err
			}
		} else {
			if f.max > 0 && f.n > f.max {
				c.stack = c.stack[:len(c.stack)-1]
				return c.fail(errs.TooLarge, "over %d elements, the limit", f.max)
			}
			if f.free == 0 {
				t, pattern = f.t.Elem(), f.pattern+"[]"
			}
		}
		if err := c.value(t, pattern); err != nil {
			return err
		}
	}
	return nil
}

// member reads an object member's key and ':' and returns the type and
// pattern of its value.
func (c *checker) member(f *frame) (reflect.Type, string, error) {
	if c.i == len(c.b) {
		return nil, "", c.syntax("unexpected end of input")
	}
	if c.b[c.i] != '"' {
		return nil, "", c.syntax("want a string key, got " + c.char())
	}
	at := c.i
	raw, esc, err := c.str()
	if err != nil {
		return nil, "", err
	}
	key := raw
	if esc {
		key = Unescape(raw)
	}
	f.key = key
	var t reflect.Type
	var pattern string
	if f.free == 0 {
		if f.fields != nil {
			var ok bool
			if t, ok = f.fields[string(key)]; !ok {
				return nil, "", c.fail(errs.Invalid, "unknown option (keys are matched in exact case)")
			}
			pattern = join(f.pattern, string(key))
		} else {
			t, pattern = f.t.Elem(), f.pattern+".*"
		}
	}
	if c.repeated(f, key, at) {
		return nil, "", c.fail(errs.Invalid, "given more than once")
	}
	c.ws()
	if c.i == len(c.b) {
		return nil, "", c.syntax("unexpected end of input")
	}
	if c.b[c.i] != ':' {
		return nil, "", c.syntax("want ':' after an object key, got " + c.char())
	}
	c.i++
	return t, pattern, nil
}

// repeated records a key (its bytes, and the offset of its opening quote)
// in f's keys and reports whether a small object holds it already; a large
// object's repeats are found when it closes (closeKeys). Keys are compared
// by a 64-bit hash whose seed is random per process, so a false repeat is a
// 2^-64 chance per pair that no client can steer; the keys of all open
// objects share one slice (16 bytes a key), which a closing object gives
// back, so a body of many objects allocates it once.
func (c *checker) repeated(f *frame, key []byte, at int) bool {
	h := maphash.Bytes(seed, key)
	if seg := c.keys[f.keys:]; len(seg) < smallObject {
		for _, k := range seg {
			if k.h == h {
				return true
			}
		}
	}
	c.keys = append(c.keys, keyRef{h, at})
	return false
}

// closeKeys gives back f's keys, first finding a repeat in a large object;
// a repeat is named by its second occurrence.
func (c *checker) closeKeys(f *frame) error {
	seg := c.keys[f.keys:]
	c.keys = c.keys[:f.keys]
	if len(seg) <= smallObject {
		return nil
	}
	slices.SortFunc(seg, func(a, b keyRef) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.at, b.at)) })
	for i := 1; i < len(seg); i++ {
		if seg[i].h != seg[i-1].h {
			continue
		}
		end := c.i
		c.i = seg[i].at
		raw, esc, _ := c.str()
		c.i = end
		f.key = raw
		if esc {
			f.key = Unescape(raw)
		}
		return c.fail(errs.Invalid, "given more than once")
	}
	return nil
}

type keyRef struct {
	h  uint64
	at int
}

var seed = maphash.MakeSeed()

// value reads one value of type t (nil inside a free-form value); an
// object or array opens a frame, whose members the caller reads.
func (c *checker) value(t reflect.Type, pattern string) error {
	c.ws()
	if c.i == len(c.b) {
		return c.syntax("unexpected end of input")
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || isFree(t) {
		return c.freeValue()
	}
	switch ch := c.b[c.i]; {
	case ch == 'n':
		if err := c.literal("null"); err != nil {
			return err
		}
		if n := len(c.stack); n > 0 && !c.stack[n-1].obj {
			return c.fail(errs.Invalid, "must not be null")
		}
		return c.fail(errs.Invalid, "must not be null (leave the key out to keep the default)")
	case ch == '{':
		if t.Kind() == reflect.Struct || t.Kind() == reflect.Map && t.Key().Kind() == reflect.String {
			c.i++
			return c.push(frame{obj: true, t: t, fields: jsonFields(t), pattern: pattern})
		}
		return c.typeError(t, "object")
	case ch == '[':
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			c.i++
			return c.push(frame{t: t, pattern: pattern, max: c.r.MaxItems[pattern]})
		}
		return c.typeError(t, "array")
	case ch == '"':
		return c.typedString(t, pattern)
	case ch == 't' || ch == 'f':
		if t.Kind() != reflect.Bool {
			return c.typeError(t, "bool")
		}
		if ch == 't' {
			return c.literal("true")
		}
		return c.literal("false")
	case ch == '-' || '0' <= ch && ch <= '9':
		raw, err := c.number()
		if err != nil {
			return err
		}
		return c.typedNumber(t, raw)
	}
	return c.syntax("want a value, got " + c.char())
}

// typedString reads a string where the type t is wanted; a pattern of
// Rules.Exact must be kept byte for byte.
func (c *checker) typedString(t reflect.Type, pattern string) error {
	if t.Kind() != reflect.String {
		return c.typeError(t, "string")
	}
	start := c.i
	raw, _, err := c.str()
	if err != nil {
		return err
	}
	if c.r.Exact[pattern] && !utf8.Valid(raw) {
		c.i = start
		return c.fail(errs.Invalid, "must be valid UTF-8 (it holds a byte that is not): it would not be kept exactly")
	}
	if c.r.Exact[pattern] && !exact(raw) {
		c.i = start
		return c.fail(errs.Invalid, "must not hold a lone surrogate escape (such as \\ud800): it would not be kept exactly")
	}
	return nil
}

// freeValue reads a value inside a free-form one: any JSON but null, and
// numbers that fit a float64 (what a client decoding it will use).
func (c *checker) freeValue() error {
	switch ch := c.b[c.i]; {
	case ch == '{' || ch == '[':
		depth := 1
		if n := len(c.stack); n > 0 {
			depth = c.stack[n-1].free + 1
		}
		if depth > c.r.MaxFreeDepth {
			return c.failAt(errs.Invalid, "nested deeper than %d levels, the limit", c.r.MaxFreeDepth)
		}
		if depth == 1 {
			c.free = c.i
		}
		c.i++
		return c.push(frame{obj: ch == '{', free: depth})
	case ch == '"':
		_, _, err := c.str()
		return err
	case ch == 't':
		return c.literal("true")
	case ch == 'f':
		return c.literal("false")
	case ch == 'n':
		if err := c.literal("null"); err != nil {
			return err
		}
		return c.fail(errs.Invalid, "must not be null (leave the key out instead)")
	case ch == '-' || '0' <= ch && ch <= '9':
		raw, err := c.number()
		if err != nil {
			return err
		}
		// Only an exponent or hundreds of digits can leave a float64's range.
		if len(raw) > 300 || bytes.ContainsAny(raw, "eE") {
			if _, err := strconv.ParseFloat(string(raw), 64); err != nil {
				return c.fail(errs.Invalid, "number %s is out of the range of a 64-bit float", errs.Clip(string(raw), errs.MaxEcho))
			}
		}
		return nil
	}
	return c.syntax("want a value, got " + c.char())
}

func (c *checker) typedNumber(t reflect.Type, raw []byte) error {
	var err error
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(string(raw), 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, err = strconv.ParseUint(string(raw), 10, t.Bits())
	case reflect.Float32, reflect.Float64:
		_, err = strconv.ParseFloat(string(raw), t.Bits())
	default:
		return c.typeError(t, "number")
	}
	if err != nil {
		return c.typeError(t, "number "+errs.Clip(string(raw), errs.MaxEcho))
	}
	return nil
}

func (c *checker) typeError(t reflect.Type, got string) error {
	return c.fail(errs.Invalid, "must be %s, got JSON %s", t.String(), got)
}

func (c *checker) push(f frame) error {
	if len(c.stack) >= c.r.MaxDepth {
		return c.failAt(errs.Invalid, "nested deeper than %d levels, the limit", c.r.MaxDepth)
	}
	f.keys = len(c.keys)
	c.stack = append(c.stack, f)
	return nil
}

// fail is an error about the value being read, named by its path.
func (c *checker) fail(code errs.Code, format string, args ...any) error {
	return c.named(c.path(len(c.stack)), code, fmt.Sprintf(format, args...))
}

// failAt is fail for a nesting error: it names the outermost free-form
// value (or the field) and the byte where the limit was passed.
func (c *checker) failAt(code errs.Code, format string, args ...any) error {
	n := len(c.stack)
	for n > 0 && c.stack[n-1].free > 0 {
		n--
	}
	return c.named(c.path(n), code, fmt.Sprintf(format, args...)+fmt.Sprintf(" (at byte %d)", c.i))
}

func (c *checker) named(field string, code errs.Code, msg string) error {
	name := field
	if name == "" {
		name = "request body"
	}
	return &errs.Error{Code: code, Field: field, Message: name + ": " + msg}
}

func (c *checker) syntax(msg string) error {
	return errs.E(errs.Invalid, "malformed JSON at byte %d: %s", c.i, msg)
}

// char names the byte at the current offset for a syntax error.
func (c *checker) char() string {
	if c.i >= len(c.b) {
		return "the end of input"
	}
	return strconv.QuoteRune(rune(c.b[c.i]))
}

// path names the value being read in the first n frames, as
// documents[3].metadata.tags[0], clipped to stay short.
func (c *checker) path(n int) string {
	var b strings.Builder
	b.WriteString(c.r.Prefix)
	for _, f := range c.stack[:n] {
		if f.obj {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(errs.Clip(string(f.key), errs.MaxEcho))
		} else {
			fmt.Fprintf(&b, "[%d]", f.n-1)
		}
		if b.Len() > 2*errs.MaxEcho {
			break
		}
	}
	return errs.Clip(b.String(), errs.MaxEcho)
}

func join(pattern, key string) string {
	if pattern == "" {
		return key
	}
	return pattern + "." + key
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// isFree reports whether values of t take any JSON: a json.RawMessage, an
// interface or a map of interfaces.
func isFree(t reflect.Type) bool {
	return t == rawMessage || t.Kind() == reflect.Interface ||
		t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.Interface
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// jsonFields maps a struct's JSON names, embedded structs' included, to
// their types; nil for a type that is not a struct.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if t.Kind() != reflect.Struct {
		return nil
	}
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := structFields(t)
	fieldCache.Store(t, m)
	return m
}

func structFields(t reflect.Type) map[string]reflect.Type {
	if t.Kind() != reflect.Struct {
		return nil
	}
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" {
			for k, v := range structFields(f.Type) {
				out[k] = v
			}
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
