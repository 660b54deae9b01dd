package memindex

import (
	"math"
	"slices"
)

// BM25 that does not score every posting of a frequent term: MaxScore's
// bounds, taken term at a time.
//
// A term's contribution to a field's score is bounded, block by block of
// its posting list, by the block's highest tf and shortest length
// (blockmax.go); a term's bound is its best block's. The terms are scored
// into dense accumulators from the highest bound down. Once k documents
// have partial scores at least theta, and the bounds of the terms left sum
// to less than theta, no document those terms alone reach can be among the
// k best: their lists are never read in full (a frequent term has a low
// IDF and so a low bound, a rare one a short list). The documents touched
// so far are then bounded (their partial score plus, per term left, the
// bound of the block where they would be), and only those whose bound
// reaches the k-th score are scored in full, their terms looked up by
// binary search in the lists. (Turtle and Flood's MaxScore; the per-block
// bounds are those of block-max indexes, as Weaviate's BlockMax WAND keeps
// them.)
//
// It is exact: a document is scored in full with its terms added in the
// query's order, as the exhaustive search adds them, so scores are the same
// to the bit; the partial sums, added in another order, only decide what
// to score, with a margin for their last bits; and a bound that only ties
// the k-th score is not pruned, as a tie can win on its document ID or
// slot. Weaviate's per-field cut keeps each field's best cut documents
// before the fields are summed, which is a per-field top-k; classic BM25 has
// one field. Without the cut, the fields' float32 sum is ranked as a whole,
// and bm25 scores exhaustively.
//
// It is off by default (Params.MaxScore): on the corpora measured here
// (docs/operations.md, "Scaling out") it reads a quarter to a third of the
// postings, but the documents it must then score in full, looking their
// terms up, cost more than the dense loop over every posting.

// cursor walks one term's posting list in one field.
type cursor struct {
	ps     []posting
	i      int
	blocks []blockMeta
	bound  []float64 // each block's bound of the term's contribution
	bi     int       // the block of the candidate last asked about
	ub     float64   // the bound of the term's contribution: its best block's
	ti     int       // the term's place in the query
	// unread are the blocks whose postings were not read (nil: none), and
	// unreadMax the highest bound among them.
	unread    []bool
	unreadMax float64
}

// skip marks block bi unread (-1: every block).
func (c *cursor) skip(bi int) {
	if c.unread == nil {
		c.unread = make([]bool, len(c.blocks))
	}
	if bi < 0 {
		for b := range c.unread {
			c.skip(b)
		}
		return
	}
	c.unread[bi] = true
	c.unreadMax = max(c.unreadMax, c.bound[bi])
}

// unreadAt is the bound of the term's contribution to document d when the
// block d would be in was left unread, else 0 (d's partial score has it, or
// d is past the list's end). Calls go in ascending order of d.
func (c *cursor) unreadAt(d int32) float64 {
	for c.bi < len(c.blocks) && c.blocks[c.bi].last < d {
		c.bi++
	}
	if c.bi == len(c.blocks) || !c.unread[c.bi] {
		return 0
	}
	return c.bound[c.bi]
}

// seek moves c to the first posting with doc >= d (galloping, then binary
// search), and reports whether it holds d.
func (c *cursor) seek(d int32) bool {
	if c.i >= len(c.ps) || c.ps[c.i].doc >= d {
		return c.i < len(c.ps) && c.ps[c.i].doc == d
	}
	step, hi := 1, c.i+1
	for hi < len(c.ps) && c.ps[hi].doc < d {
		c.i = hi
		step *= 2
		hi = c.i + step
	}
	hi = min(hi, len(c.ps))
	j, _ := slices.BinarySearchFunc(c.ps[c.i:hi], d, func(p posting, d int32) int { return int(p.doc) - int(d) })
	c.i += j
	return c.i < len(c.ps) && c.ps[c.i].doc == d
}

// margin is how far below the k-th score a bound must be for pruning: the
// bound is a sum taken in another order than the score's, so the two may
// differ in their last bits.
func margin(theta float64) float64 { return 1e-9 * max(1, math.Abs(theta)) }

// fieldTop returns the k documents of field fi with the highest BM25 score
// over the query's terms (idf by term, 0: absent) under better, in no
// order, each with its field score as the exhaustive search computes it.
func (x *gen) fieldTop(fi int, terms []string, idf []float64, allow []bool, k int, better func(a, b scoredDoc) bool) []scoredDoc {
	cs, byTerm := x.cursors(fi, terms, idf)
	top := newBest(k, better, make([]scoredDoc, 0, k))
	if len(cs) == 0 || k == 0 {
		return top.sorted()
	}
	sc := getScratch(1, len(x.docs))
	defer putScratch(sc)
	r := maxScoreRun{sc: sc, acc: sc.score[0], seen: sc.seen[0], kn: x.lengthTerms()[fi], idf: idf,
		classic: x.params.Classic, k: k, theta: math.Inf(-1)}
	r.k1, _ = x.bm25Params()
	r.accumulate(cs, allow)
	cand, bounds := r.candidates(cs)
	for i, d := range cand {
		if bounds[i]+margin(r.theta) < r.theta {
			continue
		}
		var sum float64
		for ti := range terms {
			if c := byTerm[ti]; c != nil && c.seek(d) {
				p := c.ps[c.i]
				sum += termScore(r.classic, idf[ti], float64(p.tf), r.kn[p.doc], r.k1)
			}
		}
		top.push(scoredDoc{doc: d, score: sum})
		if len(top.h) == k {
			r.theta = max(r.theta, top.h[0].score)
		}
	}
	return top.h
}

// cursors are field fi's posting lists of the query's terms with their
// block bounds, highest bound first, and the same by the term's place in
// the query (nil for a term absent or without idf).
func (x *gen) cursors(fi int, terms []string, idf []float64) (cs, byTerm []*cursor) {
	f := &x.fields[fi]
	k1, b := x.bm25Params()
	avg := f.avg()
	byTerm = make([]*cursor, len(terms))
	for ti, t := range terms {
		ps := f.postings.get(t)
		if idf[ti] == 0 || len(ps) == 0 {
			continue
		}
		c := &cursor{ps: ps, ti: ti, blocks: x.blocksOf(fi, t, ps)}
		c.bound = make([]float64, len(c.blocks))
		for j, m := range c.blocks {
			// The same expression as the length terms' (fieldLengthTerms).
			c.bound[j] = termScore(x.params.Classic, idf[ti], m.maxTF, k1*(1-b+b*m.minLen/avg), k1)
			c.ub = max(c.ub, c.bound[j])
		}
		cs, byTerm[ti] = append(cs, c), c
	}
	slices.SortStableFunc(cs, func(a, b *cursor) int {
		switch {
		case a.ub > b.ub:
			return -1
		case a.ub < b.ub:
			return 1
		}
		return 0
	})
	return cs, byTerm
}

// maxScoreRun is one field's pruned search: the partial scores and the
// lower bound of the k-th score.
type maxScoreRun struct {
	sc      *scratch
	acc     []float64 // partial score by slot
	seen    []bool
	kn      []float64 // the field's length terms by slot
	idf     []float64 // by the term's place in the query
	classic bool
	k1      float64
	k       int
	theta   float64 // a lower bound of the k-th score, once k documents have partial scores
	most    float64 // the highest partial score
	kth     []float64
}

func (r *maxScoreRun) setTheta() {
	if len(r.sc.hit[0]) < r.k {
		return
	}
	r.kth = r.kth[:0]
	for _, d := range r.sc.hit[0] {
		r.kth = append(r.kth, r.acc[d])
	}
	r.theta = kthLargest(r.kth, r.k)
}

// accumulate adds the postings of every block whose bound, with the bounds
// of the terms after, can reach the k-th score; the others are marked
// unread.
func (r *maxScoreRun) accumulate(cs []*cursor, allow []bool) {
	// rest[j] is the sum of the bounds of cs[j:].
	rest := make([]float64, len(cs)+1)
	for j := len(cs) - 1; j >= 0; j-- {
		rest[j] = rest[j+1] + cs[j].ub
	}
	for j, c := range cs {
		if rest[j]+margin(r.theta) < r.theta {
			// No document this term and the ones after reach alone can enter.
			for _, c := range cs[j:] {
				c.skip(-1)
			}
			break
		}
		for bi, m := range c.blocks {
			if c.bound[bi]+rest[j+1]+margin(r.theta) < r.theta {
				// Nor one that this block and the terms after reach: the
				// block is left unread; its documents seen already are
				// bounded with it below.
				c.skip(bi)
				continue
			}
			lo := bi * blockPostings
			for _, p := range c.ps[lo : lo+int(m.n)] {
				if allow != nil && !allow[p.doc] {
					continue
				}
				if !r.seen[p.doc] {
					r.seen[p.doc] = true
					r.sc.hit[0] = append(r.sc.hit[0], p.doc)
				}
				r.acc[p.doc] += termScore(r.classic, r.idf[c.ti], float64(p.tf), r.kn[p.doc], r.k1)
				r.most = max(r.most, r.acc[p.doc])
			}
		}
		// Skipping needs a k-th partial score above the bounds left, and
		// the k-th is at most the highest.
		if j+1 < len(cs) && rest[j+1] < r.most {
			r.setTheta()
		}
	}
	r.setTheta()
}

// candidates are the documents whose bound reaches theta, in document
// order, for the lookups, each with its bound: first bounded with each
// term's highest unread block, then with the unread block where each
// would be.
func (r *maxScoreRun) candidates(cs []*cursor) ([]int32, []float64) {
	loose := 0.0
	for _, c := range cs {
		loose += c.unreadMax
	}
	var cand []int32
	for _, d := range r.sc.hit[0] {
		if r.acc[d]+loose+margin(r.theta) >= r.theta {
			cand = append(cand, d)
		}
	}
	slices.Sort(cand)
	// Each candidate's bound, in document order (the unread blocks' walk).
	bounds := make([]float64, len(cand))
	for i, d := range cand {
		bounds[i] = r.acc[d]
		for _, c := range cs {
			if c.unreadMax > 0 {
				bounds[i] += c.unreadAt(d)
			}
		}
	}
	return cand, bounds
}

// kthLargest is the k-th largest of xs (1-based), reordering xs.
func kthLargest(xs []float64, k int) float64 {
	lo, hi, want := 0, len(xs)-1, k-1
	for lo < hi {
		p := xs[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for xs[i] > p {
				i++
			}
			for xs[j] < p {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return xs[want]
		}
	}
	return xs[want]
}

// bm25Pruned is bm25 with MaxScore: per field (Weaviate's cut) or for the
// one field (classic), only the documents that can be among the best.
func (x *gen) bm25Pruned(lx lexical, allow []bool, weaviateLimit, keep int) []scoredDoc {
	if x.params.Classic {
		hits := x.fieldTop(0, lx.terms, lx.idf, allow, keep, x.better)
		top := newBest(keep, x.better, make([]scoredDoc, 0, len(hits)))
		for _, h := range hits {
			top.push(h)
		}
		return top.sorted()
	}
	cut := max(int(1.1*float64(weaviateLimit)), weaviateLimit+10)
	bySlot := func(a, b scoredDoc) bool {
		if a.score != b.score {
			return a.score > b.score
		}
		return a.doc < b.doc // loaded earlier, as Weaviate's internal ids go
	}
	total := map[int32]float32{}
	for fi := range x.fields {
		for _, s := range x.fieldTop(fi, lx.terms, lx.idf, allow, cut, bySlot) {
			total[s.doc] += float32(s.score)
		}
	}
	top := newBest(keep, x.better, make([]scoredDoc, 0, min(keep, len(total))))
	for d, s := range total {
		top.push(scoredDoc{doc: d, score: float64(s)})
	}
	return top.sorted()
}
