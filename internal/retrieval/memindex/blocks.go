package memindex

import "github.com/dmar-kg/dmar/internal/retrieval"

// blockDocs is how many documents a block of vectors holds (dot32).
const blockDocs = 32

// blocks are the generation's document vectors laid out for dot32: slots
// in groups of blockDocs, each group dimension-major (dimension i of its
// documents side by side), an empty vector as zeros. dim is the vectors'
// dimension; blocks is nil when they do not all have one (vector search
// then takes the per-document path, which names the mismatch). Groups are
// never modified once built, so a generation shares its parent's unchanged
// groups (prepare.go).
type blocks struct {
	dim    int
	groups [][]float32 // blockDocs·dim values each
}

// buildBlocks lays out every slot's vector; nil when the vectors do not
// share one dimension, or there are none.
func buildBlocks(docs []retrieval.Document) *blocks {
	dim := 0
	for _, d := range docs {
		switch {
		case len(d.Vector) == 0:
		case dim == 0:
			dim = len(d.Vector)
		case len(d.Vector) != dim:
			return nil
		}
	}
	if dim == 0 {
		return nil
	}
	n := (len(docs) + blockDocs - 1) / blockDocs
	b := &blocks{dim: dim, groups: make([][]float32, n)}
	data := make([]float32, n*blockDocs*dim) // one allocation for a full build
	for g := range b.groups {
		b.groups[g] = data[g*blockDocs*dim : (g+1)*blockDocs*dim : (g+1)*blockDocs*dim]
		fillGroup(b.groups[g], docs, g)
	}
	return b
}

// fillGroup writes group g's vectors into blk (zeroed), lane by lane.
func fillGroup(blk []float32, docs []retrieval.Document, g int) {
	for slot := g * blockDocs; slot < min((g+1)*blockDocs, len(docs)); slot++ {
		lane := slot % blockDocs
		for i, f := range docs[slot].Vector {
			blk[i*blockDocs+lane] = f
		}
	}
}

// group is the block of the documents in slots [g·blockDocs, (g+1)·blockDocs).
func (b *blocks) group(g int) []float32 { return b.groups[g] }

// dot32Go is dot32 in Go: each lane's sum in dot's order.
func dot32Go(q, blk []float32, out *[32]float32) {
	*out = [32]float32{}
	for i, v := range q {
		row := blk[i*blockDocs : (i+1)*blockDocs]
		for j := range out {
			out[j] += v * row[j]
		}
	}
}
