package qidset

import (
	"reflect"
	"testing"
)

func TestNum(t *testing.T) {
	for in, want := range map[string]uint32{"Q1": 1, "Q42": 42, "Q4294967295": 4294967295} {
		if n, ok := Num(in); !ok || n != want {
			t.Errorf("Num(%q) = %d, %v", in, n, ok)
		}
	}
	for _, bad := range []string{"", "Q", "Q0", "Q01", "P31", "Q4294967296", "Q-1", "Q+1", "q1"} {
		if _, ok := Num(bad); ok {
			t.Errorf("Num(%q) accepted", bad)
		}
	}
}

func TestSet(t *testing.T) {
	var s Set
	if !s.Add(5) || s.Add(5) || !s.Add(100000) || !s.Has(5) || s.Has(6) || s.Has(1<<30) || !s.Add(1<<32-1) || !s.Has(1<<32-1) || s.Has(1<<32-2) || s.Has(1_000_000_000) {
		t.Fatal("set semantics broken")
	}
}

// TestCounter counts numbers near zero, around page edges and far up (up
// to the largest QID Num accepts), and lists them in order; far-apart
// numbers allocate only their own pages.
func TestCounter(t *testing.T) {
	var c Counter
	want := map[uint32]uint32{}
	add := func(n uint32) {
		c.Inc(n)
		want[n]++
	}
	for i := uint32(0); i < 3000; i++ {
		add(i*7 + 1)
		add(1_000_000_000 + i*i)
		if i%100 == 0 {
			add(i*7 + 1)
		}
	}
	for _, n := range []uint32{pageSize - 1, pageSize, 1<<32 - 1} {
		add(n)
	}
	got := map[uint32]uint32{}
	var last uint32
	first := true
	c.Each(func(n, v uint32) {
		if !first && n <= last {
			t.Fatalf("Each out of order: %d after %d", n, last)
		}
		first, last = false, n
		got[n] = v
	})
	if !reflect.DeepEqual(got, want) || c.Get(8) != 1 || c.Get(1) != 2 || c.Get(2) != 0 || c.Get(1<<32-2) != 0 {
		t.Fatal("counts differ")
	}
	var pages int
	for _, p := range c.pages {
		if p != nil {
			pages++
		}
	}
	// 1..21000 (1 page), pageSize (the second), 1e9 + i*i up to 1e9 + 9e6
	// (138 pages), 2^32-1 (1): not the 15,259 pages up to 1e9.
	if pages > 150 {
		t.Fatalf("%d pages allocated", pages)
	}
}
