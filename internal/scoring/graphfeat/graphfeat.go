// Package graphfeat turns kg.Subgraphs into the padded dense tensors the
// Siamese GNN reads. It is the one definition of the GNN's input: the
// training-data generator (models/gnn), the ONNX Runtime encoder and the pure
// Go reference all call Featurize, so training and serving cannot drift.
//
// Per node (F = 64 features, every value a pure function of the subgraph, with
// no salted hashes, so identical across processes and machines):
//
//	[0,32)  entity sketch: 32 signs (+-EntityScale) from splitmix64(FNV-1a(QID))
//	[32,44) mean sign sketch of the PIDs of the node's outgoing edges
//	[44,56) mean sign sketch of the PIDs of the node's incoming edges
//	[56,60) hop one-hot: 0, 1, 2, >=3
//	60      hub flag
//	61, 62  log1p(out-degree), log1p(in-degree) within the subgraph, / log(65)
//	63      1 for a real node (0 for padding)
//
// Direction enters through two row-normalised adjacency matrices (AdjOut[i][j]
// = 1/outdeg(i) for an edge i->j, AdjIn[i][j] = 1/indeg(i) for an edge j->i),
// so the GraphSAGE mean aggregation is split by edge direction; relation
// types enter through the PID sketches. The path A->B->C and the path A->C->B
// therefore give different inputs.
package graphfeat

import (
	"fmt"
	"math"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Feature layout.
const (
	F          = 64 // features per node
	EntityDims = 32
	RelDims    = 12
	offOutRel  = EntityDims
	offInRel   = offOutRel + RelDims
	offHop     = offInRel + RelDims
	offHub     = offHop + 4
	offOutDeg  = offHub + 1
	offInDeg   = offOutDeg + 1
	offReal    = offInDeg + 1
	// DefaultN is the padded node count (the spec's N_max).
	DefaultN = 64
	// EntityScale is the magnitude of each entity-sketch component.
	EntityScale = 0.25
)

// Batch is a padded dense batch in row-major order: X [B,N,F], AdjOut and
// AdjIn [B,N,N], Mask [B,N]. Nodes sit in the subgraph's own order (BFS
// order); graphs with more than N nodes keep their first N.
type Batch struct {
	B, N          int
	X             []float32
	AdjOut, AdjIn []float32
	Mask          []float32
}

// Featurize builds the padded batch of gs with n nodes per graph. Edges whose
// ends are not both among the kept nodes are ignored; duplicate edges count
// once.
func Featurize(gs []kg.Subgraph, n int) (Batch, error) {
	if n <= 0 {
		return Batch{}, fmt.Errorf("graphfeat: node count %d must be positive", n)
	}
	b := Batch{
		B: len(gs), N: n,
		X:      make([]float32, len(gs)*n*F),
		AdjOut: make([]float32, len(gs)*n*n),
		AdjIn:  make([]float32, len(gs)*n*n),
		Mask:   make([]float32, len(gs)*n),
	}
	for i, g := range gs {
		fill(&b, i, g)
	}
	return b, nil
}

func fill(b *Batch, gi int, g kg.Subgraph) {
	n := b.N
	idx := make(map[string]int, len(g.Nodes))
	for _, nd := range g.Nodes {
		if len(idx) == n {
			break
		}
		if _, dup := idx[nd.QID]; !dup {
			idx[nd.QID] = len(idx)
		}
	}
	x := b.X[gi*n*F : (gi+1)*n*F]
	outDeg := make([]int, n)
	inDeg := make([]int, n)
	type pair struct{ from, to int }
	seen := map[pair]bool{}
	type rel struct {
		from, to int
		pid      string
	}
	var rels []rel
	seenRel := map[rel]bool{}
	for _, e := range g.Edges {
		f, okf := idx[e.From]
		t, okt := idx[e.To]
		if !okf || !okt {
			continue
		}
		r := rel{f, t, e.PID}
		if seenRel[r] {
			continue
		}
		seenRel[r] = true
		rels = append(rels, r)
		if p := (pair{f, t}); !seen[p] {
			seen[p] = true
			outDeg[f]++
			inDeg[t]++
		}
	}
	// Relation sketches: mean over a node's out (in) statements.
	outRel := make([]int, n)
	inRel := make([]int, n)
	for _, r := range rels {
		s := RelSketch(r.pid)
		for k := 0; k < RelDims; k++ {
			x[r.from*F+offOutRel+k] += s[k]
			x[r.to*F+offInRel+k] += s[k]
		}
		outRel[r.from]++
		inRel[r.to]++
	}
	for p := range seen {
		b.AdjOut[gi*n*n+p.from*n+p.to] = 1 / float32(outDeg[p.from])
		b.AdjIn[gi*n*n+p.to*n+p.from] = 1 / float32(inDeg[p.to])
	}
	logN := math.Log(65)
	for _, nd := range g.Nodes {
		i, ok := idx[nd.QID]
		if !ok || b.Mask[gi*n+i] == 1 {
			continue
		}
		b.Mask[gi*n+i] = 1
		row := x[i*F : (i+1)*F]
		es := EntitySketch(nd.QID)
		copy(row[:EntityDims], es[:])
		for k := 0; k < RelDims; k++ {
			if outRel[i] > 0 {
				row[offOutRel+k] /= float32(outRel[i])
			}
			if inRel[i] > 0 {
				row[offInRel+k] /= float32(inRel[i])
			}
		}
		h := nd.Hop
		if h < 0 {
			h = 0
		}
		if h > 3 {
			h = 3
		}
		row[offHop+h] = 1
		if nd.Hub {
			row[offHub] = 1
		}
		row[offOutDeg] = float32(math.Log1p(float64(outDeg[i])) / logN)
		row[offInDeg] = float32(math.Log1p(float64(inDeg[i])) / logN)
		row[offReal] = 1
	}
}

// fnv1a64 is FNV-1a, 64 bit: fixed constants, the same everywhere.
func fnv1a64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// splitmix64 mixes a hash so that its low bits are usable as independent signs.
func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// EntitySketch is the deterministic random sign vector of a QID.
func EntitySketch(qid string) [EntityDims]float32 {
	var out [EntityDims]float32
	h := splitmix64(fnv1a64("Q:" + qid))
	for k := 0; k < EntityDims; k++ {
		if h>>k&1 == 1 {
			out[k] = EntityScale
		} else {
			out[k] = -EntityScale
		}
	}
	return out
}

// RelSketch is the deterministic random sign vector of a PID.
func RelSketch(pid string) [RelDims]float32 {
	var out [RelDims]float32
	h := splitmix64(fnv1a64("P:" + pid))
	for k := 0; k < RelDims; k++ {
		if h>>k&1 == 1 {
			out[k] = 1
		} else {
			out[k] = -1
		}
	}
	return out
}
