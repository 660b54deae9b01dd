// Package chanio is what every channel of the pipeline reads and where it
// reports: a channel (the KG's graph channel, kgchan; the text graph
// channel, textchan) starts from a Query and records its degradations and
// the timings of its backend calls in a Trace. The pipeline declares the
// channel interface it consumes (pipeline.Channel) over these types; this
// leaf package lets the channels name them without importing the pipeline.
package chanio

import (
	"context"
	"sync"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// Query is what a channel starts from: Q encoded and linked, and a
// search's hits.
type Query struct {
	Text      string
	Vector    []float32  // enc(Q)
	RelVector *RelVector // Q under the relation encoder; Vector without one of its own
	// Mentions are Q's linked mentions (none: no entity seeds)
	Mentions []kg.Mention
	Hits     []retrieval.Hit // the stage-1 search's, in search order
}

// RelVector is Q under the relation encoder, encoded when first read: a
// request whose graph channel reads Q's masked question encodes Q itself
// under the relation encoder only where that is not read (nothing masked
// after linking, no walk, the relation prior). Safe for concurrent use.
type RelVector struct {
	once   sync.Once
	vec    []float32
	err    error
	encode func(context.Context) ([]float32, error)
}

// Encoded is a RelVector already encoded.
func Encoded(vec []float32) *RelVector {
	r := &RelVector{vec: vec}
	r.once.Do(func() {})
	return r
}

// Lazy is a RelVector that encode encodes on first read.
func Lazy(encode func(context.Context) ([]float32, error)) *RelVector {
	return &RelVector{encode: encode}
}

// Get is the vector, encoded now (under ctx) on first read.
func (r *RelVector) Get(ctx context.Context) ([]float32, error) {
	r.once.Do(func() { r.vec, r.err = r.encode(ctx) })
	return r.vec, r.err
}

// Trace records a channel's degradations and the timings of its parts
// (the request's trace).
type Trace interface {
	// Fallback records that the channel degraded, and why.
	Fallback(name, reason string)
	// HasFallback reports whether fallback name was recorded (a channel
	// part that runs twice in a request says it once).
	HasFallback(name string) bool
	// Add adds d to the timing of stage name.
	Add(name string, d time.Duration)
}
