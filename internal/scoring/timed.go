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
	return timeCall(e.t, "encoder", func() ([][]float32, error) { return e.Encoder.Encode(ctx, texts) })
}

// TimedQuestions times a question encoder's calls as the encoder's (one
// call encodes a question for both encoders) on metrics when it is an
// InferenceTimer, and returns q unchanged otherwise.
func TimedQuestions(metrics any, q QuestionEncoder) QuestionEncoder {
	if t, ok := metrics.(InferenceTimer); ok {
		return timedQuestions{q, t}
	}
	return q
}

type timedQuestions struct {
	QuestionEncoder
	t InferenceTimer
}

func (q timedQuestions) EncodeQuestion(ctx context.Context, text string) (EncodedQuestion, error) {
	return timeCall(q.t, "encoder", func() (EncodedQuestion, error) { return q.QuestionEncoder.EncodeQuestion(ctx, text) })
}

type timedGNN struct {
	GraphEncoder
	t InferenceTimer
}

func (g timedGNN) EncodeGraphs(ctx context.Context, gs []kg.Subgraph) ([][]float32, error) {
	return timeCall(g.t, "gnn", func() ([][]float32, error) { return g.GraphEncoder.EncodeGraphs(ctx, gs) })
}

type timedGate struct {
	Gate
	t InferenceTimer
}

func (g timedGate) Weights(ctx context.Context, q []float32, docs [][]float32) ([][2]float64, error) {
	return timeCall(g.t, "gate", func() ([][2]float64, error) { return g.Gate.Weights(ctx, q, docs) })
}

// timeCall runs call and records its time on t under model.
func timeCall[T any](t InferenceTimer, model string, call func() (T, error)) (T, error) {
	start := time.Now()
	out, err := call()
	t.Inference(model, time.Since(start))
	return out, err
}
