// Package gnnref is the pure-Go float64 reference forward pass of dmar's
// Siamese GNN (models/gnn/gnn.onnx). It reads the weights from the ONNX file
// itself and computes, naively, what the ONNX graph is meant to compute:
//
//	for l in 1..3: H = ReLU(concat(H, AdjOut·H, AdjIn·H) · W_l + b_l)
//	p = sum_n mask_n H_n / max(sum_n mask_n, 1)
//	emb = (p · W_o + b_o) / max(||p · W_o + b_o||, 1e-12)
//
// Tests check the ONNX Runtime output against it; benchmarks use it as the
// naive baseline. It is not meant for serving.
package gnnref

import (
	"fmt"
	"math"
	"os"

	"github.com/dmar-kg/dmar/internal/scoring/graphfeat"
)

// Initializer names in gnn.onnx.
var layerNames = []string{"sage1", "sage2", "sage3"}

const outName = "out"

type dense struct {
	in, out int
	w       []float64 // [in][out]
	b       []float64
}

// Model holds the GNN weights.
type Model struct {
	layers []dense
	out    dense
}

// Load reads the weights of an ONNX GNN file.
func Load(path string) (*Model, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gnnref: %w", err)
	}
	inits, err := Initializers(raw)
	if err != nil {
		return nil, fmt.Errorf("gnnref: %s: %w", path, err)
	}
	m := &Model{}
	for _, name := range layerNames {
		d, err := denseFrom(inits, name)
		if err != nil {
			return nil, fmt.Errorf("gnnref: %s: %w", path, err)
		}
		m.layers = append(m.layers, d)
	}
	if m.out, err = denseFrom(inits, outName); err != nil {
		return nil, fmt.Errorf("gnnref: %s: %w", path, err)
	}
	if m.layers[0].in != 3*graphfeat.F {
		return nil, fmt.Errorf("gnnref: %s: first layer takes %d inputs, want 3*F = %d", path, m.layers[0].in, 3*graphfeat.F)
	}
	for i := 1; i < len(m.layers); i++ {
		if m.layers[i].in != 3*m.layers[i-1].out {
			return nil, fmt.Errorf("gnnref: %s: layer %d takes %d inputs, want %d", path, i+1, m.layers[i].in, 3*m.layers[i-1].out)
		}
	}
	if m.out.in != m.layers[len(m.layers)-1].out {
		return nil, fmt.Errorf("gnnref: %s: output layer takes %d inputs, want %d", path, m.out.in, m.layers[len(m.layers)-1].out)
	}
	return m, nil
}

func denseFrom(inits map[string]Tensor, name string) (dense, error) {
	w, ok := inits[name+"_w"]
	if !ok || len(w.Dims) != 2 {
		return dense{}, fmt.Errorf("initializer %s_w missing or not 2-D", name)
	}
	b, ok := inits[name+"_b"]
	if !ok || len(b.Dims) != 1 || b.Dims[0] != w.Dims[1] {
		return dense{}, fmt.Errorf("initializer %s_b missing or not of length %d", name, w.Dims[1])
	}
	d := dense{in: w.Dims[0], out: w.Dims[1], w: make([]float64, len(w.Data)), b: make([]float64, len(b.Data))}
	for i, v := range w.Data {
		d.w[i] = float64(v)
	}
	for i, v := range b.Data {
		d.b[i] = float64(v)
	}
	return d, nil
}

// Dim is the embedding dimension.
func (m *Model) Dim() int { return m.out.out }

// Forward embeds every graph of the batch.
func (m *Model) Forward(b graphfeat.Batch) [][]float64 {
	out := make([][]float64, b.B)
	for g := 0; g < b.B; g++ {
		out[g] = m.one(b, g)
	}
	return out
}

func (m *Model) one(b graphfeat.Batch, g int) []float64 {
	n := b.N
	h := make([][]float64, n)
	for i := range h {
		h[i] = make([]float64, graphfeat.F)
		for k := range h[i] {
			h[i][k] = float64(b.X[(g*n+i)*graphfeat.F+k])
		}
	}
	for _, l := range m.layers {
		din := len(h[0])
		next := make([][]float64, n)
		for i := 0; i < n; i++ {
			cat := make([]float64, 3*din)
			copy(cat, h[i])
			for j := 0; j < n; j++ {
				ao := float64(b.AdjOut[(g*n+i)*n+j])
				ai := float64(b.AdjIn[(g*n+i)*n+j])
				for k := 0; k < din; k++ {
					cat[din+k] += ao * h[j][k]
					cat[2*din+k] += ai * h[j][k]
				}
			}
			next[i] = l.apply(cat, true)
		}
		h = next
	}
	pool := make([]float64, len(h[0]))
	count := 0.0
	for i := 0; i < n; i++ {
		mk := float64(b.Mask[g*n+i])
		count += mk
		for k := range pool {
			pool[k] += mk * h[i][k]
		}
	}
	count = math.Max(count, 1)
	for k := range pool {
		pool[k] /= count
	}
	y := m.out.apply(pool, false)
	norm := 0.0
	for _, v := range y {
		norm += v * v
	}
	norm = math.Max(math.Sqrt(norm), 1e-12)
	for k := range y {
		y[k] /= norm
	}
	return y
}

func (d dense) apply(x []float64, relu bool) []float64 {
	y := make([]float64, d.out)
	copy(y, d.b)
	for i, xv := range x {
		if xv == 0 {
			continue
		}
		row := d.w[i*d.out : (i+1)*d.out]
		for o := range y {
			y[o] += xv * row[o]
		}
	}
	if relu {
		for o := range y {
			y[o] = math.Max(y[o], 0)
		}
	}
	return y
}
