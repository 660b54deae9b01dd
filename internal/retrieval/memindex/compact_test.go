package memindex

import (
	"slices"
	"testing"

	"github.com/dmar-kg/dmar/internal/vec"
)

// How far int8 vectors (vec.Int8, a quarter of float32's memory) move the
// exact scan's top 100 on a real corpus and real questions (codexm's
// snapshot, kgqa dev), alone and when their best 200 are scored again in
// float32: the measurement behind storing vectors compactly with exact
// re-scoring (docs/ann.md). Re-scored, every score is the float32 one to
// the bit and the order is the float32 scan's.
func TestInt8ScanOnRealVectors(t *testing.T) {
	if raceEnabled {
		t.Skip("long comparison: run without -race")
	}
	docs := snapshotVectors(t)
	qs := questionVectors(t, len(docs[0].Vector))
	if qs == nil {
		t.Skip("no encoder for the questions")
	}
	codes := make([]vec.Int8, len(docs))
	norms, cnorms := make([]float64, len(docs)), make([]float64, len(docs))
	for i, d := range docs {
		codes[i] = vec.Quantize(d.Vector)
		norms[i], cnorms[i] = vec.Norm(d.Vector), vec.Norm(codes[i].Float32())
	}
	better := func(a, b scoredDoc) bool { return a.score > b.score || a.score == b.score && a.doc < b.doc }
	top := func(k int, score func(i int) float64, among []int32) []scoredDoc {
		b := newBest(k, better, nil)
		if among == nil {
			for i := range docs {
				if norms[i] > 0 {
					b.push(scoredDoc{doc: int32(i), score: score(i)})
				}
			}
		}
		for _, i := range among {
			b.push(scoredDoc{doc: i, score: score(int(i))})
		}
		return b.sorted()
	}
	overlap := func(a, b []scoredDoc) int {
		in := map[int32]bool{}
		for _, s := range a {
			in[s.doc] = true
		}
		n := 0
		for _, s := range b {
			if in[s.doc] {
				n++
			}
		}
		return n
	}
	var int8Found, rescoredFound, top5Same, want int
	for _, q := range qs {
		qn := vec.Norm(q)
		exact := func(i int) float64 { return float64(vec.Dot(q, docs[i].Vector)) / (qn * norms[i]) }
		ref := top(100, exact, nil)
		approx := top(200, func(i int) float64 { return float64(codes[i].Dot(q)) / (qn * cnorms[i]) }, nil)
		cands := make([]int32, len(approx))
		for i, s := range approx {
			cands[i] = s.doc
		}
		rescored := top(100, exact, cands)
		int8Found += overlap(ref, approx[:100])
		rescoredFound += overlap(ref, rescored)
		want += len(ref)
		for i, s := range rescored {
			if s.score != exact(int(s.doc)) || i > 0 && !better(rescored[i-1], s) {
				t.Fatalf("re-scored hit %d: score %v (float32 %v), out of order", i, s.score, exact(int(s.doc)))
			}
		}
		if slices.Equal(ref[:5], rescored[:5]) {
			top5Same++
		}
	}
	r8, rr := float64(int8Found)/float64(want), float64(rescoredFound)/float64(want)
	t.Logf("%d documents, %d questions: recall@100 of the int8 scan %.4f; its best 200 re-scored in float32 %.4f; top 5 the same as float32's for %d questions",
		len(docs), len(qs), r8, rr, top5Same)
	if r8 < 0.95 || rr < 0.99 {
		t.Errorf("recall@100 int8 %.4f (want at least 0.95), re-scored %.4f (want at least 0.99)", r8, rr)
	}
}
