package onnx

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat"
)

var _ scoring.GraphEncoder = (*GraphEncoder)(nil)

// GNN model inputs and output (models/gnn/train.py writes them).
var (
	gnnInputs  = []string{"x", "adj_out", "adj_in", "mask"}
	gnnOutputs = []string{"embedding"}
)

// MaxGNNBatch is the most subgraphs one model call takes; larger requests
// are split. Per graph, ORT is fastest at 16-32 graphs per call: at 256 the
// [B,N,3H] intermediates (12 MB) leave the cache and a 64-node graph costs
// 1.3-1.7x as much (models/gnn/README.md, "Speed").
const MaxGNNBatch = 32

// GNNModelFile is the committed model's path inside the repository.
const GNNModelFile = "models/gnn/gnn.onnx"

// DefaultGNNPath is models/gnn/gnn.onnx in the first directory at or above
// the working directory that has it (the repository root when dmar runs
// from a checkout).
func DefaultGNNPath() string { return findUp(GNNModelFile) }

// GraphEncoder is the Siamese GNN run by ONNX Runtime: subgraphs are
// featurised by graphfeat (the training featurisation), padded per call to
// the largest graph of the call (at most MaxNodes nodes) and embedded in
// calls of at most MaxGNNBatch graphs. Safe for concurrent use.
type GraphEncoder struct {
	sess     *Session
	dim      int
	maxNodes int
	version  string
	batches  sync.Pool // *graphfeat.Batch, featurisation buffers
}

// GNNOption adjusts NewGraphEncoder.
type GNNOption func(*GraphEncoder)

// NewGraphEncoder loads the GNN model at path (DefaultGNNPath() for the
// committed one).
func NewGraphEncoder(rt *Runtime, path string, opts ...GNNOption) (*GraphEncoder, error) {
	g := &GraphEncoder{maxNodes: graphfeat.DefaultN}
	g.batches.New = func() any { return new(graphfeat.Batch) }
	for _, o := range opts {
		o(g)
	}
	if g.maxNodes < 1 {
		return nil, fmt.Errorf("gnn: max nodes %d must be positive", g.maxNodes)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gnn: %w", err)
	}
	sum := sha256.Sum256(raw)
	g.version = "gnn-" + hex.EncodeToString(sum[:6])
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return nil, fmt.Errorf("gnn: read %s: %w", path, err)
	}
	for _, in := range ins {
		if in.Name == "x" && (len(in.Dimensions) != 3 || in.Dimensions[2] != graphfeat.F) {
			return nil, fmt.Errorf("gnn: %s takes x of shape %v, graphfeat makes [B,N,%d]", path, in.Dimensions, graphfeat.F)
		}
	}
	for _, o := range outs {
		if o.Name == "embedding" && len(o.Dimensions) == 2 {
			g.dim = int(o.Dimensions[1])
		}
	}
	if g.dim <= 0 {
		return nil, fmt.Errorf("gnn: %s has no output \"embedding\" of shape [B,D]", path)
	}
	if g.sess, err = rt.NewSession(path, gnnInputs, gnnOutputs); err != nil {
		return nil, fmt.Errorf("gnn: %w", err)
	}
	return g, nil
}

// Dim is the embedding dimension.
func (g *GraphEncoder) Dim() int { return g.dim }

// Version implements scoring.GraphEncoder: "gnn-" and the start of the
// model file's SHA-256.
func (g *GraphEncoder) Version() string { return g.version }

// Close frees the session.
func (g *GraphEncoder) Close() error { return g.sess.Close() }

// EncodeGraphs implements scoring.GraphEncoder. Graphs are grouped by size
// so that padding stays small; the result keeps the input order. The
// vectors share one allocation (each capped at its own length); the
// featurisation buffers are pooled across calls.
func (g *GraphEncoder) EncodeGraphs(ctx context.Context, gs []kg.Subgraph) ([][]float32, error) {
	out := make([][]float32, len(gs))
	if len(gs) == 0 {
		return out, nil
	}
	order := make([]int, len(gs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(gs[a].Nodes) - len(gs[b].Nodes) })
	slab := make([]float32, len(gs)*g.dim)
	buf := g.batches.Get().(*graphfeat.Batch)
	defer g.batches.Put(buf)
	chunk := make([]kg.Subgraph, 0, min(len(gs), MaxGNNBatch))
	for lo := 0; lo < len(order); lo += MaxGNNBatch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		idx := order[lo:min(lo+MaxGNNBatch, len(order))]
		chunk = chunk[:0]
		n := 1
		for _, i := range idx {
			chunk = append(chunk, gs[i])
			n = max(n, min(len(gs[i].Nodes), g.maxNodes))
		}
		if err := graphfeat.FeaturizeInto(buf, chunk, n); err != nil {
			return nil, fmt.Errorf("gnn: %w", err)
		}
		dst := slab[lo*g.dim : (lo+len(idx))*g.dim]
		if err := g.forward(*buf, dst); err != nil {
			return nil, err
		}
		for j, i := range idx {
			out[i] = dst[j*g.dim : (j+1)*g.dim : (j+1)*g.dim]
		}
	}
	return out, nil
}

// Forward embeds a batch featurised already (graphfeat.Featurize), in model
// calls of at most MaxGNNBatch graphs (views into b, nothing is copied) but
// without EncodeGraphs' sorting by size: for callers that featurise
// themselves, and to time the model alone.
func (g *GraphEncoder) Forward(b graphfeat.Batch) ([][]float32, error) {
	flat := make([]float32, b.B*g.dim)
	n, f := b.N, graphfeat.F
	for lo := 0; lo < b.B; lo += MaxGNNBatch {
		hi := min(lo+MaxGNNBatch, b.B)
		part := b
		part.B = hi - lo
		if hi*n*f <= len(b.X) && hi*n*n <= min(len(b.AdjOut), len(b.AdjIn)) && hi*n <= len(b.Mask) {
			part.X, part.Mask = b.X[lo*n*f:hi*n*f], b.Mask[lo*n:hi*n]
			part.AdjOut, part.AdjIn = b.AdjOut[lo*n*n:hi*n*n], b.AdjIn[lo*n*n:hi*n*n]
		} // else forward reports the wrong sizes
		if err := g.forward(part, flat[lo*g.dim:hi*g.dim]); err != nil {
			return nil, err
		}
	}
	vecs := make([][]float32, b.B)
	for i := range vecs {
		vecs[i] = flat[i*g.dim : (i+1)*g.dim : (i+1)*g.dim]
	}
	return vecs, nil
}

// forward runs the model on b, writing the B embeddings into dst
// (len B*dim): the tensors wrap b's and dst's memory, nothing is copied.
func (g *GraphEncoder) forward(b graphfeat.Batch, dst []float32) error {
	B, N := int64(b.B), int64(b.N)
	if len(b.X) != b.B*b.N*graphfeat.F || len(b.AdjOut) != b.B*b.N*b.N || len(b.AdjIn) != len(b.AdjOut) || len(b.Mask) != b.B*b.N {
		return fmt.Errorf("gnn: batch of %d graphs and %d nodes has inputs of the wrong sizes", b.B, b.N)
	}
	if len(dst) != b.B*g.dim {
		return errors.New("gnn: output buffer of the wrong size")
	}
	var ins []ort.Value
	defer func() { Destroy(ins...) }()
	for _, t := range []struct {
		data  []float32
		shape ort.Shape
	}{
		{b.X, ort.NewShape(B, N, graphfeat.F)},
		{b.AdjOut, ort.NewShape(B, N, N)},
		{b.AdjIn, ort.NewShape(B, N, N)},
		{b.Mask, ort.NewShape(B, N)},
	} {
		v, err := ort.NewTensor(t.shape, t.data)
		if err != nil {
			return fmt.Errorf("gnn: input tensor: %w", err)
		}
		ins = append(ins, v)
	}
	outT, err := ort.NewTensor(ort.NewShape(B, int64(g.dim)), dst)
	if err != nil {
		return fmt.Errorf("gnn: output tensor: %w", err)
	}
	defer outT.Destroy()
	if err := g.sess.Run(ins, []ort.Value{outT}); err != nil {
		return fmt.Errorf("gnn: %w", err)
	}
	return nil
}
