package synth

import (
	"math/rand/v2"

	"github.com/dmar-kg/dmar/internal/vec"
)

// Space draws seeded vectors like sentence embeddings in the respect that
// matters to a vector graph: they are clustered (1,000 centres) and of
// lower intrinsic dimension than their length (a 48-d latent mapped by a
// fixed random matrix, plus a little isotropic noise). They are not real
// embeddings, so recall measured on them compares implementations with
// each other, not with a real corpus (dmar bench ann, docs/ann.md).
type Space struct {
	proj, centres [][]float32
}

// spaceLatent is the latent dimension, spaceCentres the clusters.
const spaceLatent, spaceCentres = 48, 1000

// NewSpace is the space of dim-dimensional vectors drawn with rng (which
// then goes on to draw from it).
func NewSpace(rng *rand.Rand, dim int) *Space {
	s := &Space{proj: make([][]float32, dim), centres: make([][]float32, spaceCentres)}
	for d := range s.proj {
		s.proj[d] = normal(rng, spaceLatent, 1/float64(spaceLatent))
	}
	for i := range s.centres {
		s.centres[i] = normal(rng, spaceLatent, 1)
	}
	return s
}

// Draw is n vectors of the space: a centre, a latent offset around it,
// mapped, plus noise.
func (s *Space) Draw(rng *rand.Rand, n int) [][]float32 {
	out := make([][]float32, n)
	z := make([]float32, spaceLatent)
	for i := range out {
		c := s.centres[rng.IntN(len(s.centres))]
		for j := range z {
			z[j] = c[j] + float32(0.6*rng.NormFloat64())
		}
		v := make([]float32, len(s.proj))
		for d := range v {
			v[d] = vec.Dot(s.proj[d], z) + float32(0.05*rng.NormFloat64())
		}
		out[i] = v
	}
	return out
}

func normal(rng *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(scale * rng.NormFloat64())
	}
	return v
}
