package eval

import (
	"math"
	"math/rand/v2"

	"github.com/dmar-kg/dmar/internal/stats"
)

// CI is a difference of means with its bootstrap confidence interval.
type CI struct {
	Diff float64 `json:"diff"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	N    int     `json:"n"` // paired questions
}

// Significant reports whether the interval excludes zero.
func (c CI) Significant() bool { return c.Lo > 0 || c.Hi < 0 }

// PairedBootstrap estimates mean(a - b) over paired observations and its 95%
// percentile interval from resamples of the questions (with replacement),
// seeded so that a run is reproducible. Pairs with a NaN on either side are
// left out.
func PairedBootstrap(a, b []float64, resamples int, seed uint64) CI {
	var d []float64
	for i := range a {
		if i < len(b) && !math.IsNaN(a[i]) && !math.IsNaN(b[i]) {
			d = append(d, a[i]-b[i])
		}
	}
	if len(d) == 0 {
		return CI{Diff: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	if resamples <= 0 {
		resamples = 1000
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	means := make([]float64, resamples)
	n := len(d)
	for r := range means {
		t := 0.0
		for range n {
			t += d[rng.IntN(n)]
		}
		means[r] = t / float64(n)
	}
	return CI{Diff: stats.Mean(d), Lo: stats.Percentile(means, 2.5), Hi: stats.Percentile(means, 97.5), N: n}
}
