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
	"sync"

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
	// DefaultN is the padded node count (N_max, docs/method.md).
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
	var b Batch
	err := FeaturizeInto(&b, gs, n)
	return b, err
}

// FeaturizeInto is Featurize writing into dst, reusing dst's buffers when
// they are large enough (every value is overwritten), so that a caller
// embedding batch after batch allocates nothing per call. dst must not be in
// use elsewhere (e.g. by a tensor still being read).
func FeaturizeInto(dst *Batch, gs []kg.Subgraph, n int) error {
	if n <= 0 {
		return fmt.Errorf("graphfeat: node count %d must be positive", n)
	}
	B := len(gs)
	*dst = Batch{
		B: B, N: n,
		X:      reuse(dst.X, B*n*F),
		AdjOut: reuse(dst.AdjOut, B*n*n),
		AdjIn:  reuse(dst.AdjIn, B*n*n),
		Mask:   reuse(dst.Mask, B*n),
	}
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	for i := range gs {
		s.fill(dst, i, &gs[i])
	}
	// Hold no strings of the caller's graphs in the pool.
	clear(s.idx)
	clear(s.rels[:cap(s.rels)])
	return nil
}

// reuse returns buf[:size], or a new slice if buf is too small. fill clears
// each graph's part just before writing it, while it is in cache.
func reuse(buf []float32, size int) []float32 {
	if buf == nil || cap(buf) < size {
		return make([]float32, size)
	}
	return buf[:size]
}

// scratch is fill's per-graph working memory, pooled so that featurising
// allocates nothing once warm.
type scratch struct {
	idx                          map[string]int32
	outDeg, inDeg, outRel, inRel []int32
	first                        []int32
	rels                         []rel
}

// rel is one distinct (from, to, PID) statement between kept nodes.
type rel struct {
	from, to int32
	pid      string
}

var scratchPool = sync.Pool{New: func() any { return &scratch{idx: make(map[string]int32, DefaultN)} }}

func ints(buf []int32, n int) []int32 {
	if cap(buf) < n {
		return make([]int32, n)
	}
	buf = buf[:n]
	clear(buf)
	return buf
}

// fill writes graph gi of b. The adjacency matrices double as the set of
// node pairs already seen: a non-zero AdjOut[f][t] marks f->t until the row
// means are written.
func (s *scratch) fill(b *Batch, gi int, g *kg.Subgraph) {
	n := b.N
	s.index(g, n)
	x := b.X[gi*n*F : (gi+1)*n*F]
	adjOut := b.AdjOut[gi*n*n : (gi+1)*n*n]
	adjIn := b.AdjIn[gi*n*n : (gi+1)*n*n]
	mask := b.Mask[gi*n : (gi+1)*n]
	clear(x)
	clear(adjOut)
	clear(adjIn)
	clear(mask)
	s.outDeg, s.inDeg = ints(s.outDeg, n), ints(s.inDeg, n)
	s.outRel, s.inRel = ints(s.outRel, n), ints(s.inRel, n)
	s.statements(g, n, adjOut)
	s.relations(n, x, adjOut, adjIn)
	s.nodeRows(g, x, mask)
}

// index numbers g's first n distinct nodes: s.idx maps a QID to its row,
// s.first[i] is the position in g.Nodes of row i.
func (s *scratch) index(g *kg.Subgraph, n int) {
	clear(s.idx)
	s.first = s.first[:0]
	for p, nd := range g.Nodes {
		if len(s.idx) == n {
			break
		}
		if _, dup := s.idx[nd.QID]; !dup {
			s.idx[nd.QID] = int32(len(s.idx))
			s.first = append(s.first, int32(p))
		}
	}
}

// statements keeps g's distinct statements between kept nodes in s.rels,
// counting each node pair once in the degrees and marking it in adjOut.
func (s *scratch) statements(g *kg.Subgraph, n int, adjOut []float32) {
	s.rels = s.rels[:0]
	var from string // edges come sorted by From: look each up once
	f, okf := int32(0), false
	for _, e := range g.Edges {
		if e.From != from || !okf {
			from = e.From
			f, okf = s.idx[from]
		}
		t, okt := s.idx[e.To]
		if !okf || !okt {
			continue
		}
		if p := int(f)*n + int(t); adjOut[p] == 0 {
			adjOut[p] = 1 // first statement between f and t
			s.outDeg[f]++
			s.inDeg[t]++
		} else if s.hasRel(f, t, e.PID) {
			continue
		}
		s.rels = append(s.rels, rel{f, t, e.PID})
	}
}

// relations adds each statement's PID sketch to its ends' out and in sums
// (nodeRows turns them into means) and writes the row-normalised
// adjacencies.
func (s *scratch) relations(n int, x, adjOut, adjIn []float32) {
	for _, r := range s.rels {
		h := relHash(r.pid)
		of, it := x[int(r.from)*F+offOutRel:], x[int(r.to)*F+offInRel:]
		for k := 0; k < RelDims; k++ {
			v := float32(-1)
			if h>>k&1 == 1 {
				v = 1
			}
			of[k] += v
			it[k] += v
		}
		s.outRel[r.from]++
		s.inRel[r.to]++
		adjOut[int(r.from)*n+int(r.to)] = 1 / float32(s.outDeg[r.from])
		adjIn[int(r.to)*n+int(r.from)] = 1 / float32(s.inDeg[r.to])
	}
}

// nodeRows writes each kept node's features and mask.
func (s *scratch) nodeRows(g *kg.Subgraph, x, mask []float32) {
	for i, p := range s.first {
		nd := &g.Nodes[p]
		mask[i] = 1
		row := x[i*F : (i+1)*F]
		h := entityHash(nd.QID)
		for k := 0; k < EntityDims; k++ {
			if h>>k&1 == 1 {
				row[k] = EntityScale
			} else {
				row[k] = -EntityScale
			}
		}
		if c := s.outRel[i]; c > 0 {
			for k := offOutRel; k < offOutRel+RelDims; k++ {
				row[k] /= float32(c)
			}
		}
		if c := s.inRel[i]; c > 0 {
			for k := offInRel; k < offInRel+RelDims; k++ {
				row[k] /= float32(c)
			}
		}
		row[offHop+min(max(nd.Hop, 0), 3)] = 1
		if nd.Hub {
			row[offHub] = 1
		}
		row[offOutDeg] = logDeg(s.outDeg[i])
		row[offInDeg] = logDeg(s.inDeg[i])
		row[offReal] = 1
	}
}

// hasRel reports whether f->t with pid was kept already; only asked when f
// and t have a statement already, which is rare.
func (s *scratch) hasRel(f, t int32, pid string) bool {
	for j := len(s.rels) - 1; j >= 0; j-- {
		if r := &s.rels[j]; r.from == f && r.to == t && r.pid == pid {
			return true
		}
	}
	return false
}

// logDegs[d] is the degree feature of degree d, computed once.
var logDegs = func() (t [4 * DefaultN]float32) {
	for d := range t {
		t[d] = logDegFeature(int32(d))
	}
	return t
}()

func logDeg(d int32) float32 {
	if int(d) < len(logDegs) {
		return logDegs[d]
	}
	return logDegFeature(d)
}

func logDegFeature(d int32) float32 {
	return float32(math.Log1p(float64(d)) / math.Log(65))
}

// fnvOffset and fnvPrime are FNV-1a's 64-bit constants: fixed, the same
// everywhere.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// prefixed is FNV-1a of prefix + ":" + s, without building the string.
func prefixed(prefix byte, s string) uint64 {
	h := (uint64(fnvOffset) ^ uint64(prefix)) * fnvPrime
	h = (h ^ ':') * fnvPrime
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// entityHash and relHash are the sign bits of EntitySketch and RelSketch.
func entityHash(qid string) uint64 { return splitmix64(prefixed('Q', qid)) }
func relHash(pid string) uint64    { return splitmix64(prefixed('P', pid)) }

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
	signs(out[:], entityHash(qid), EntityScale)
	return out
}

// RelSketch is the deterministic random sign vector of a PID.
func RelSketch(pid string) [RelDims]float32 {
	var out [RelDims]float32
	signs(out[:], relHash(pid), 1)
	return out
}

// signs sets out[k] to scale where bit k of h is set, else to -scale.
func signs(out []float32, h uint64, scale float32) {
	for k := range out {
		if h>>k&1 == 1 {
			out[k] = scale
		} else {
			out[k] = -scale
		}
	}
}
