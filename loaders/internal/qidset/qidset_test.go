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
	if !s.Add(5) || s.Add(5) || !s.Add(100000) || !s.Has(5) || s.Has(6) || s.Has(1<<30) {
		t.Fatal("set semantics broken")
	}
}

// TestCounterSparseThenDense crosses the switch to the flat slice.
func TestCounterSparseThenDense(t *testing.T) {
	defer func(d int) { denseAfter = d }(denseAfter)
	denseAfter = 1000
	var c Counter
	want := map[uint32]uint32{}
	for i := uint32(0); i < uint32(denseAfter)+10; i++ {
		n := i*3 + 1
		c.Inc(n)
		want[n]++
		if i%1000 == 0 {
			c.Inc(n)
			want[n]++
		}
	}
	if c.c == nil {
		t.Fatal("still sparse after denseAfter numbers")
	}
	got := map[uint32]uint32{}
	last := uint32(0)
	c.Each(func(n, v uint32) {
		if n < last {
			t.Fatalf("Each out of order: %d after %d", n, last)
		}
		last = n
		got[n] = v
	})
	if !reflect.DeepEqual(got, want) || c.Get(4) != 1 || c.Get(2) != 0 {
		t.Fatal("counts differ")
	}
}
