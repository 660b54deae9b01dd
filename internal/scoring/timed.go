package scoring

import (
	"context"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
)

// InferenceTimer records one model call's time (server.Metrics implements it).
type InferenceTimer interface {
	Inference(model string, d time.Duration)
}

// Timed times the models' calls on metrics when it is an InferenceTimer, and
// returns the models unchanged otherwise. Nil gnn or gate stay nil.
func Timed(metrics any, enc Encoder, gnn GraphEncoder, gate Gate) (Encoder, GraphEncoder, Gate) {
	t, ok := metrics.(InferenceTimer)
	if !ok {
		return enc, gnn, gate
	}
	enc = timedEncoder{enc, t}
	if gnn != nil {
		gnn = timedGNN{gnn, t}
	}
	if gate != nil {
		gate = timedGate{gate, t}
	}
	return enc, gnn, gate
}

type timedEncoder struct {
	Encoder
	t InferenceTimer
}

func (e timedEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	start := time.Now()
	out, err := e.Encoder.Encode(ctx, texts)
	e.t.Inference("encoder", time.Since(start))
	return out, err
}

type timedGNN struct {
	GraphEncoder
	t InferenceTimer
}

func (g timedGNN) EncodeGraphs(ctx context.Context, gs []kg.Subgraph) ([][]float32, error) {
	start := time.Now()
	out, err := g.GraphEncoder.EncodeGraphs(ctx, gs)
	g.t.Inference("gnn", time.Since(start))
	return out, err
}

type timedGate struct {
	Gate
	t InferenceTimer
}

func (g timedGate) Weights(ctx context.Context, q []float32, docs [][]float32) ([][2]float64, error) {
	start := time.Now()
	out, err := g.Gate.Weights(ctx, q, docs)
	g.t.Inference("gate", time.Since(start))
	return out, err
}
