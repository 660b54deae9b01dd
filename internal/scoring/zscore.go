package scoring

import "math"

// ZScores normalises xs to (x - mean) / std with the population standard
// deviation; when std is 0 every score is 0.
func ZScores(xs []float64) []float64 {
	out := make([]float64, len(xs))
	if len(xs) == 0 {
		return out
	}
	var mean float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var v float64
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	std := math.Sqrt(v / float64(len(xs)))
	if std < 1e-12 {
		return out
	}
	for i, x := range xs {
		out[i] = (x - mean) / std
	}
	return out
}
