// Package qidset holds sets and counters keyed by Wikidata item numbers
// (Q42 -> 42) in flat slices: a full dump's ~120 M items take 15 MB as a set
// and 480 MB as a counter, where a map would take gigabytes.
package qidset

import (
	"slices"
	"strconv"
)

// Num returns the number of an item id ("Q42" -> 42), ok false if s is not
// a valid QID below 2^32.
func Num(s string) (uint32, bool) {
	if len(s) < 2 || s[0] != 'Q' || s[1] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(s[1:], 10, 32)
	return uint32(n), err == nil
}

// Set is a growable bit set of item numbers.
type Set struct{ w []uint64 }

// Add inserts n and reports whether it was new.
func (s *Set) Add(n uint32) bool {
	i := int(n / 64)
	if i >= len(s.w) {
		s.w = append(s.w, make([]uint64, i+1-len(s.w)+len(s.w)/4)...)
	}
	bit := uint64(1) << (n % 64)
	if s.w[i]&bit != 0 {
		return false
	}
	s.w[i] |= bit
	return true
}

// Has reports whether n is in the set.
func (s *Set) Has(n uint32) bool {
	i := int(n / 64)
	return i < len(s.w) && s.w[i]&(uint64(1)<<(n%64)) != 0
}

// Counter counts per item number: in a map while few numbers have counts,
// in a flat slice once more than denseAfter do (a small load that names Q1
// and Q100000000 must not allocate 400 MB).
type Counter struct {
	m map[uint32]uint32
	c []uint32
}

var denseAfter = 1 << 20 // a variable for the tests

// Inc adds one to n's count.
func (c *Counter) Inc(n uint32) {
	if c.c == nil {
		if c.m == nil {
			c.m = map[uint32]uint32{}
		}
		c.m[n]++
		if len(c.m) <= denseAfter {
			return
		}
		var hi uint32
		for k := range c.m {
			hi = max(hi, k)
		}
		c.c = make([]uint32, int(hi)+1)
		for k, v := range c.m {
			c.c[k] = v
		}
		c.m = nil
		return
	}
	if int(n) >= len(c.c) {
		c.c = append(c.c, make([]uint32, int(n)+1-len(c.c)+len(c.c)/4)...)
	}
	c.c[n]++
}

// Get returns n's count.
func (c *Counter) Get(n uint32) uint32 {
	if c.c == nil {
		return c.m[n]
	}
	if int(n) < len(c.c) {
		return c.c[n]
	}
	return 0
}

// Each calls fn for every number with a count, in increasing order.
func (c *Counter) Each(fn func(n, count uint32)) {
	if c.c == nil {
		keys := make([]uint32, 0, len(c.m))
		for k := range c.m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fn(k, c.m[k])
		}
		return
	}
	for n, v := range c.c {
		if v > 0 {
			fn(uint32(n), v)
		}
	}
}
