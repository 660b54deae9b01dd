package memindex

import "sync"

// blockPostings is how many postings a block of a posting list holds.
const blockPostings = 64

// blockMeta bounds the postings of one block of a list: their last
// document, highest term frequency and shortest document length in the
// field. A term's contribution tf/(tf + k1·(1 - b + b·len/avg)) grows with
// tf and shrinks with len, so (maxTF, minLen) bound every posting of the
// block whatever the field's average, which changes with every write.
type blockMeta struct {
	last          int32
	n             int32 // postings in the block
	maxTF, minLen float64
}

// termBlocks is one posting list's blocks, for the list of length n.
type termBlocks struct {
	n      int
	blocks []blockMeta
}

// blockCache holds the blocks of the posting lists searches have asked
// for, by field and term: made on a term's first search in a generation and
// handed to the next generation for every list its write did not touch.
type blockCache struct{ m sync.Map } // ownKey -> *termBlocks

// blocksOf is the blocks of field fi's list ps of term t.
func (x *gen) blocksOf(fi int, t string, ps []posting) []blockMeta {
	k := ownKey{fi, t}
	if v, ok := x.prep.bmax.m.Load(k); ok {
		if tb := v.(*termBlocks); tb.n == len(ps) {
			return tb.blocks
		}
	}
	length := x.fields[fi].length
	bs := make([]blockMeta, 0, (len(ps)+blockPostings-1)/blockPostings)
	for lo := 0; lo < len(ps); lo += blockPostings {
		blk := ps[lo:min(lo+blockPostings, len(ps))]
		m := blockMeta{last: blk[len(blk)-1].doc, n: int32(len(blk)), maxTF: float64(blk[0].tf), minLen: length[blk[0].doc]}
		for _, p := range blk[1:] {
			m.maxTF = max(m.maxTF, float64(p.tf))
			m.minLen = min(m.minLen, length[p.doc])
		}
		bs = append(bs, m)
	}
	x.prep.bmax.m.Store(k, &termBlocks{n: len(ps), blocks: bs})
	return bs
}

// inheritBlocks gives the generation just written the parent's blocks of
// every list the write did not touch.
func (x *gen) inheritBlocks(parent *gen) {
	stale := make(map[ownKey]bool, len(x.staleBlocks))
	for _, k := range x.staleBlocks {
		stale[k] = true
	}
	parent.prep.bmax.m.Range(func(k, v any) bool {
		if _, touched := x.owned[k.(ownKey)]; !touched && !stale[k.(ownKey)] {
			x.prep.bmax.m.Store(k, v)
		}
		return true
	})
}
