// Package stats holds the one percentile definition that dmar's evaluation,
// latency benchmark and load test share, so that a p95 means the same thing
// in every report.
package stats

import (
	"math"
	"sort"
)

// Percentile is the p-th percentile (p in [0, 100]) of xs by linear
// interpolation between closest ranks (numpy's default, "linear"); NaN for
// no values. xs is not modified.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return SortedPercentile(s, p)
}

// SortedPercentile is Percentile of xs already sorted ascending, without a
// copy (for many percentiles of one large sample).
func SortedPercentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return sorted[lo] + (sorted[hi]-sorted[lo])*(pos-float64(lo))
}

// Mean is the arithmetic mean; NaN for no values.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}
