package memindex

// blockDocs is how many documents a block of vectors holds (dot32).
const blockDocs = 32

// blocks are the generation's document vectors laid out for dot32: slots
// in groups of blockDocs, each group dimension-major (dimension i of its
// documents side by side), an empty vector as zeros. dim is the vectors'
// dimension; blocks is nil when they do not all have one (vector search
// then takes the per-document path, which names the mismatch).
type blocks struct {
	dim  int
	data []float32
}

func (x *gen) blocks() *blocks {
	p := &x.prep
	p.blocksOnce.Do(func() {
		dim := 0
		for _, d := range x.docs {
			switch {
			case len(d.Vector) == 0:
			case dim == 0:
				dim = len(d.Vector)
			case len(d.Vector) != dim:
				return
			}
		}
		if dim == 0 {
			return
		}
		groups := (len(x.docs) + blockDocs - 1) / blockDocs
		b := &blocks{dim: dim, data: make([]float32, groups*blockDocs*dim)}
		for slot, d := range x.docs {
			g, lane := slot/blockDocs, slot%blockDocs
			base := g * blockDocs * dim
			for i, f := range d.Vector {
				b.data[base+i*blockDocs+lane] = f
			}
		}
		p.blocks = b
	})
	return p.blocks
}

// group is the block of the documents in slots [g·blockDocs, (g+1)·blockDocs).
func (b *blocks) group(g int) []float32 {
	n := blockDocs * b.dim
	return b.data[g*n : (g+1)*n]
}

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
