package stats

import (
	"math"
	"testing"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{4, 1, 3, 2}
	near(t, "p50", Percentile(xs, 50), 2.5, 1e-12)
	near(t, "p0", Percentile(xs, 0), 1, 0)
	near(t, "p100", Percentile(xs, 100), 4, 0)
	near(t, "p95", Percentile(xs, 95), 3.85, 1e-12)
	if xs[0] != 4 {
		t.Error("Percentile sorted its input")
	}
	if !math.IsNaN(Percentile(nil, 50)) || !math.IsNaN(SortedPercentile(nil, 50)) {
		t.Error("percentile of nothing must be NaN")
	}
	near(t, "one value", Percentile([]float64{7}, 99), 7, 0)
	near(t, "sorted p25", SortedPercentile([]float64{10, 20, 30, 40, 50}, 25), 20, 1e-12)
}

func TestMean(t *testing.T) {
	near(t, "mean", Mean([]float64{1, 2, 3, 6}), 3, 1e-12)
	if !math.IsNaN(Mean(nil)) {
		t.Error("mean of nothing must be NaN")
	}
}
