package memindex

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// explainFusedRef is the explanation as fmt wrote it, each list searched
// for the document: the reference the explainer must match byte for byte.
func explainFusedRef(f retrieval.Fusion, alpha float64, k int, lex, dense []scoredDoc, s scoredDoc) string {
	name := "relativeScore"
	if f == retrieval.RankedFusion {
		name = "rankedFusion"
	}
	var parts []string
	for _, l := range []struct {
		list []scoredDoc
		w    float64
		name string
	}{{lex, 1 - alpha, "bm25"}, {dense, alpha, "vector"}} {
		lo, hi := span(l.list)
		for rank, h := range l.list {
			if h.doc == s.doc {
				parts = append(parts, fmt.Sprintf("%s %.4f (rank %d) -> %.4f", l.name, h.score, rank+1, contribution(f, l.w, k, rank, h.score, lo, hi)))
			}
		}
	}
	return fmt.Sprintf("hybrid %s alpha=%.2f: %s", name, alpha, strings.Join(parts, "; "))
}

// The explainer writes what fmt wrote, for documents in one list, in both,
// twice in one (never so from a search, but said all the same) and in none,
// under both fusions, with negative scores and equal ones.
func TestFusedExplainerMatchesFmt(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	list := func(n int) []scoredDoc {
		out := make([]scoredDoc, n)
		for i := range out {
			out[i] = scoredDoc{doc: int32(rng.IntN(60)), score: rng.NormFloat64() * 3}
			if i%7 == 3 {
				out[i].score = 1
			}
		}
		return out
	}
	for trial := 0; trial < 40; trial++ {
		lex, dense := list(rng.IntN(50)), list(rng.IntN(50))
		for _, f := range []retrieval.Fusion{retrieval.RelativeScore, retrieval.RankedFusion} {
			alpha := rng.Float64()
			e := newFusedExplainer(f, alpha, 60, lex, dense)
			for d := int32(0); d < 62; d++ {
				s := scoredDoc{doc: d, score: rng.Float64()}
				if got, want := e.explain(s), explainFusedRef(f, alpha, 60, lex, dense, s); got != want {
					t.Fatalf("trial %d, %s, document %d:\n got %q\nwant %q", trial, f, d, got, want)
				}
			}
		}
	}
}
