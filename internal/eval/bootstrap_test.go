package eval

import (
	"math"
	"testing"
)

func TestPairedBootstrapConstantDifference(t *testing.T) {
	a := []float64{1, 0.5, 0.7, 0.2}
	b := []float64{0.5, 0, 0.2, -0.3}
	ci := PairedBootstrap(a, b, 500, 7)
	if ci.Diff != 0.5 || ci.Lo != 0.5 || ci.Hi != 0.5 || ci.N != 4 {
		t.Fatalf("constant difference 0.5: got %+v", ci)
	}
	if !ci.Significant() {
		t.Error("an interval of [0.5, 0.5] excludes 0")
	}
}

func TestPairedBootstrapTwoPoints(t *testing.T) {
	// Differences {0, 1}: resampled means are 0, 0.5 or 1 with probability
	// 1/4, 1/2, 1/4, so the 2.5th and 97.5th percentiles are 0 and 1.
	ci := PairedBootstrap([]float64{0, 1}, []float64{0, 0}, 4000, 3)
	if ci.Diff != 0.5 || ci.Lo != 0 || ci.Hi != 1 {
		t.Fatalf("got %+v, want diff 0.5 in [0, 1]", ci)
	}
	if ci.Significant() {
		t.Error("[0, 1] does not exclude 0")
	}
}

func TestPairedBootstrapMatchesNormalApproximation(t *testing.T) {
	// 400 paired questions, the system wins 100 of them by 1: mean 0.25,
	// standard error sqrt(0.25*0.75/400) = 0.02165, so the 95% interval is
	// about 0.25 ± 0.0424.
	a := make([]float64, 400)
	b := make([]float64, 400)
	for i := range 100 {
		a[i*4] = 1
	}
	ci := PairedBootstrap(a, b, 4000, 11)
	near(t, "diff", ci.Diff, 0.25, 1e-12)
	near(t, "lo", ci.Lo, 0.25-1.96*math.Sqrt(0.25*0.75/400), 0.006)
	near(t, "hi", ci.Hi, 0.25+1.96*math.Sqrt(0.25*0.75/400), 0.006)
	again := PairedBootstrap(a, b, 4000, 11)
	if again != ci {
		t.Errorf("same seed, different interval: %+v vs %+v", again, ci)
	}
}

func TestPairedBootstrapSkipsNaN(t *testing.T) {
	ci := PairedBootstrap([]float64{1, math.NaN(), 1}, []float64{0, 0, math.NaN()}, 100, 1)
	if ci.N != 1 || ci.Diff != 1 {
		t.Fatalf("got %+v, want one pair with difference 1", ci)
	}
	if ci := PairedBootstrap([]float64{math.NaN()}, []float64{0}, 100, 1); !math.IsNaN(ci.Diff) {
		t.Fatalf("no pairs: got %+v", ci)
	}
}
