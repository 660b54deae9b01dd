package scoringtest

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
)

// WordVector is a text's vector under Words: its lower-cased words,
// stripped of punctuation, hashed into 64 dimensions and L2-normalised.
func WordVector(text string) []float32 {
	v := make([]float32, 64)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := fnv.New32a()
		h.Write([]byte(strings.Trim(w, ".,?!;:\"'()")))
		v[h.Sum32()%64]++
	}
	return Normalize(v)
}

// Words is a deterministic stand-in for the sentence encoder, for tests of
// what sits around one: texts sharing words are close (WordVector). A text
// without words is the first unit vector. It is not a model.
type Words struct{}

// Dim implements scoring.Encoder.
func (Words) Dim() int { return 64 }

// Version implements scoring.Encoder.
func (Words) Version() string { return "test-words" }

// Encode implements scoring.Encoder.
func (Words) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = WordVector(t)
	}
	return out, nil
}

// Normalize scales v to unit length in place and returns it; the zero
// vector becomes the first unit vector, so that a cosine with it is defined.
func Normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x * x)
	}
	if s == 0 {
		v[0] = 1
		return v
	}
	n := float32(math.Sqrt(s))
	for i := range v {
		v[i] /= n
	}
	return v
}
