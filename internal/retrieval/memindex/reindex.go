package memindex

import (
	"slices"
	"sort"
)

// reindex replaces the postings and length of the document in slot (still
// x.docs[slot]) with those of terms, in the generation being written.
// Unlike unindex then index, it leaves alone the posting lists of terms
// whose count did not change, so that an edit copies only the lists it
// changes (a long list, for a common term, is copied once per generation
// it changes in); the outcome is the same.
func (x *gen) reindex(slot int32, terms []docTerms) {
	x.changed = append(x.changed, slot)
	old := x.tokenize(x.docs[slot])
	for fi := range x.fields {
		f := &x.fields[fi]
		was, now := old[fi], terms[fi]
		f.length[slot] = float64(now.length)
		f.tokens += int64(now.length - was.length)
		if !f.classic {
			f.counted += int64(b2i(now.length > 0) - b2i(was.length > 0))
		}
		for t := range was.tf {
			if _, kept := now.tf[t]; !kept {
				x.removePosting(fi, t, slot)
			}
		}
		for t, c := range now.tf {
			if p, had := was.tf[t]; !had {
				x.addPosting(fi, t, slot, c)
			} else if p != c {
				x.setPosting(fi, t, slot, c)
			} else if now.length != was.length {
				// The list stays, but the bounds of its blocks (blockmax.go)
				// may hold the document's old length.
				x.staleBlocks = append(x.staleBlocks, ownKey{fi, t})
			}
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ownedList returns field fi's posting list of t, copied first unless the
// generation being written already owns it.
func (x *gen) ownedList(fi int, t string, extra int) []posting {
	ps := x.fields[fi].postings.get(t)
	if !x.own(fi, t) {
		ps = append(make([]posting, 0, len(ps)+extra), ps...)
	}
	return ps
}

func (x *gen) addPosting(fi int, t string, slot int32, tf float64) {
	ps := x.ownedList(fi, t, 1)
	i := sort.Search(len(ps), func(i int) bool { return ps[i].doc >= slot })
	x.fields[fi].postings.set(t, slices.Insert(ps, i, posting{doc: slot, tf: float32(tf)}))
}

func (x *gen) removePosting(fi int, t string, slot int32) {
	f := &x.fields[fi]
	ps := f.postings.get(t)
	i := sort.Search(len(ps), func(i int) bool { return ps[i].doc >= slot })
	if i == len(ps) || ps[i].doc != slot {
		return
	}
	if len(ps) == 1 {
		f.postings.del(t)
		return
	}
	ps = x.ownedList(fi, t, 0)
	f.postings.set(t, slices.Delete(ps, i, i+1))
}

func (x *gen) setPosting(fi int, t string, slot int32, tf float64) {
	ps := x.ownedList(fi, t, 0)
	i := sort.Search(len(ps), func(i int) bool { return ps[i].doc >= slot })
	if i < len(ps) && ps[i].doc == slot {
		ps[i].tf = float32(tf)
	}
	x.fields[fi].postings.set(t, ps)
}
