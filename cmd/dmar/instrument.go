package main

import (
	"context"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// inferenceTimer records one model call's time (server.Metrics implements it).
type inferenceTimer interface {
	Inference(model string, d time.Duration)
}

type timedEncoder struct {
	scoring.Encoder
	t inferenceTimer
}

func (e timedEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	start := time.Now()
	out, err := e.Encoder.Encode(ctx, texts)
	e.t.Inference("encoder", time.Since(start))
	return out, err
}

type timedGNN struct {
	scoring.GraphEncoder
	t inferenceTimer
}

func (g timedGNN) EncodeGraphs(ctx context.Context, gs []kg.Subgraph) ([][]float32, error) {
	start := time.Now()
	out, err := g.GraphEncoder.EncodeGraphs(ctx, gs)
	g.t.Inference("gnn", time.Since(start))
	return out, err
}

type timedGate struct {
	scoring.Gate
	t inferenceTimer
}

func (g timedGate) Weights(ctx context.Context, q []float32, docs [][]float32) ([][2]float64, error) {
	start := time.Now()
	out, err := g.Gate.Weights(ctx, q, docs)
	g.t.Inference("gate", time.Since(start))
	return out, err
}

// instrumentModels times the models' calls when metrics can record them.
func instrumentModels(metrics any, enc scoring.Encoder, gnn scoring.GraphEncoder, gate scoring.Gate) (scoring.Encoder, scoring.GraphEncoder, scoring.Gate) {
	t, ok := metrics.(inferenceTimer)
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
