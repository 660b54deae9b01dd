package eval

import (
	"crypto/sha256"
	"fmt"
	"sort"
)

// The halves of a benchmark's questions (--half): a fixed rule on the
// question's id, so that a setting tuned on one half is reported on the
// other, and the halves never change with the file's order or size.
const (
	HalfTune   = "tune"
	HalfReport = "report"
)

// HalfOf is the half a question id belongs to: tune when the first byte of
// sha256(id) is even, report when it is odd.
func HalfOf(id string) string {
	if sha256.Sum256([]byte(id))[0]%2 == 0 {
		return HalfTune
	}
	return HalfReport
}

// KeepHalf keeps the questions of one half ("" keeps all), in file order;
// the corpus is kept whole.
func (ds *Dataset) KeepHalf(half string) error {
	switch half {
	case "":
		return nil
	case HalfTune, HalfReport:
	default:
		return fmt.Errorf("--half must be %s or %s, got %q", HalfTune, HalfReport, half)
	}
	kept := ds.Questions[:0]
	for _, q := range ds.Questions {
		if HalfOf(q.ID) == half {
			kept = append(kept, q)
		}
	}
	ds.Questions = kept
	if len(ds.Questions) == 0 {
		return fmt.Errorf("dataset %s: no question in the %s half", ds.Path, half)
	}
	ds.Notes = append(ds.Notes, fmt.Sprintf("Only the %s half of the questions (the first byte of sha256(id) %s): %d questions.", half, map[string]string{HalfTune: "even", HalfReport: "odd"}[half], len(ds.Questions)))
	return nil
}

// Limit keeps the first n questions (n <= 0 keeps all); the corpus is kept
// whole (the pooled setting searches all of it).
func (ds *Dataset) Limit(n int) {
	if n > 0 && len(ds.Questions) > n {
		ds.Questions = ds.Questions[:n]
	}
}

// Sample keeps n questions chosen by a fixed rule (the n smallest
// sha256(seed, id)), in file order; n <= 0 or n >= the count keeps all.
// The same seed picks the same questions on every machine.
func (ds *Dataset) Sample(n int, seed uint64) {
	if n <= 0 || len(ds.Questions) <= n {
		return
	}
	type keyed struct {
		i   int
		key string
	}
	ks := make([]keyed, len(ds.Questions))
	for i, q := range ds.Questions {
		h := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s", seed, q.ID)))
		ks[i] = keyed{i, string(h[:])}
	}
	sort.Slice(ks, func(a, b int) bool { return ks[a].key < ks[b].key })
	keep := make([]bool, len(ds.Questions))
	for _, k := range ks[:n] {
		keep[k.i] = true
	}
	var out []Question
	for i, q := range ds.Questions {
		if keep[i] {
			out = append(out, q)
		}
	}
	ds.Questions = out
}
