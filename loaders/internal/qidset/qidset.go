// Package qidset holds sets and counters keyed by Wikidata item numbers
// (Q42 -> 42) in paged flat arrays: a full dump's ~120 M items take 15 MB as
// a set and 480 MB as a counter, where a map would take gigabytes.
package qidset

import "strconv"

// Num returns the number of an item id ("Q42" -> 42), ok false if s is not
// a valid QID below 2^32.
func Num(s string) (uint32, bool) {
	if len(s) < 2 || s[0] != 'Q' || s[1] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(s[1:], 10, 32)
	return uint32(n), err == nil
}

// Numbers are paged: page n>>pageBits holds the numbers sharing those high
// bits, allocated when one of them is first added. Dense ranges (Wikidata's
// Q1..Q140M) cost what a flat slice would; far-apart ones (a handful of
// items near Q1 and a million from Q1000000000 up, as the large-graph
// benchmark's synthetic items are) cost only their pages, where a flat slice
// reaching the largest number took 4 GB as a counter.
const (
	pageBits = 16
	pageSize = 1 << pageBits
)

// Set is a growable bit set of item numbers.
type Set struct{ pages []*[pageSize / 64]uint64 }

// Add inserts n and reports whether it was new.
func (s *Set) Add(n uint32) bool {
	p := int(n >> pageBits)
	if p >= len(s.pages) {
		s.pages = append(s.pages, make([]*[pageSize / 64]uint64, p+1-len(s.pages))...)
	}
	if s.pages[p] == nil {
		s.pages[p] = new([pageSize / 64]uint64)
	}
	w, bit := &s.pages[p][(n%pageSize)/64], uint64(1)<<(n%64)
	if *w&bit != 0 {
		return false
	}
	*w |= bit
	return true
}

// Has reports whether n is in the set.
func (s *Set) Has(n uint32) bool {
	p := int(n >> pageBits)
	return p < len(s.pages) && s.pages[p] != nil && s.pages[p][(n%pageSize)/64]&(uint64(1)<<(n%64)) != 0
}

// Counter counts per item number.
type Counter struct{ pages []*[pageSize]uint32 }

// Inc adds one to n's count.
func (c *Counter) Inc(n uint32) {
	p := int(n >> pageBits)
	if p >= len(c.pages) {
		c.pages = append(c.pages, make([]*[pageSize]uint32, p+1-len(c.pages))...)
	}
	if c.pages[p] == nil {
		c.pages[p] = new([pageSize]uint32)
	}
	c.pages[p][n%pageSize]++
}

// Get returns n's count.
func (c *Counter) Get(n uint32) uint32 {
	p := int(n >> pageBits)
	if p < len(c.pages) && c.pages[p] != nil {
		return c.pages[p][n%pageSize]
	}
	return 0
}

// Each calls fn for every number with a count, in increasing order.
func (c *Counter) Each(fn func(n, count uint32)) {
	for p, page := range c.pages {
		if page == nil {
			continue
		}
		for i, v := range page {
			if v > 0 {
				fn(uint32(p)<<pageBits|uint32(i), v)
			}
		}
	}
}
