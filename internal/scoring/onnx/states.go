package onnx

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/dmar-kg/dmar/internal/scoring"
)

// QueryStates is a query encoded with the last-layer states of its own word
// pieces kept, so that a vector pooled over any of its words costs no second
// model call (the relation projection's masked question, relproj.go).
type QueryStates struct {
	// Vector is the query's vector, as Encode gives it.
	Vector []float32
	states []float32 // [len(pieces), dim]: the query's pieces, prefix and [CLS]/[SEP] left out
	pieces []string  // the query's word pieces, as the model read them (truncated)
	query  string    // the query without its outer space, as the model read it
	lead   int       // bytes of outer space cut from the start of the query as given
	dim    int
	e      *Encoder
}

// EncodeStates encodes query as Encode does (the same model call, the same
// vector) and keeps its pieces' states. Only for encoders that pool in Go
// (bge, e5): all-MiniLM-L6-v2's graph returns the pooled vector alone.
func (e *Encoder) EncodeStates(ctx context.Context, query string) (*QueryStates, error) {
	if e.spec.Pooling == PoolInGraph {
		return nil, fmt.Errorf("encoder %s pools in its graph: it has no token states to keep", e.spec.Name)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	row := e.tokens(query)
	flat, _, err := e.lastHidden(e.sess, [][]int64{row})
	if err != nil {
		return nil, err
	}
	vecs := e.poolRaw(flat, [][]int64{row}, len(row))
	trimmed := strings.TrimFunc(query, unicode.IsSpace)
	s := &QueryStates{Vector: vecs[0], query: trimmed, lead: strings.Index(query, trimmed), dim: e.dim, e: e}
	skip := 1 + len(e.tok.Tokens(e.prefix)) // [CLS] and the prefix
	n := max(0, len(row)-1-skip)            // [SEP] ends the row
	s.pieces = e.tok.Tokens(trimmed)
	s.pieces = s.pieces[:min(n, len(s.pieces))]
	s.states = slices.Clone(flat[skip*e.dim : (skip+len(s.pieces))*e.dim])
	return s, nil
}

// Pooled is the mean of the states of the query's pieces outside leaveOut
// (byte spans of the query as given to EncodeStates); ok is false when no
// piece is left or a span's edge cuts a word piece.
func (s *QueryStates) Pooled(leaveOut []scoring.Span) (mean []float32, ok bool) {
	out, ok := s.outside(leaveOut)
	if !ok {
		return nil, false
	}
	acc := make([]float64, s.dim)
	n := 0
	for i := range s.pieces {
		if !out[i] {
			continue
		}
		for k, x := range s.states[i*s.dim : (i+1)*s.dim] {
			acc[k] += float64(x)
		}
		n++
	}
	if n == 0 {
		return nil, false
	}
	mean = make([]float32, s.dim)
	for k := range acc {
		mean[k] = float32(acc[k] / float64(n))
	}
	return mean, true
}

// outside says for each piece whether it lies outside leaveOut. The query is
// cut at the spans' edges and each part tokenised alone: where the parts'
// pieces, joined, are the query's own, every piece belongs to one part.
func (s *QueryStates) outside(leaveOut []scoring.Span) ([]bool, bool) {
	type part struct {
		start, end int
		in         bool
	}
	spans := slices.Clone(leaveOut)
	slices.SortFunc(spans, func(a, b scoring.Span) int { return a.Start - b.Start })
	var parts []part
	at := 0
	for _, sp := range spans {
		lo, hi := max(sp.Start-s.lead, at), min(sp.End-s.lead, len(s.query))
		if hi <= lo {
			continue
		}
		parts = append(parts, part{at, lo, false}, part{lo, hi, true})
		at = hi
	}
	parts = append(parts, part{at, len(s.query), false})
	out := make([]bool, 0, len(s.pieces))
	for _, p := range parts {
		for _, piece := range s.e.tok.Tokens(s.query[p.start:p.end]) {
			if len(out) < len(s.pieces) && s.pieces[len(out)] != piece {
				return nil, false
			}
			out = append(out, !p.in)
		}
	}
	if len(out) < len(s.pieces) {
		return nil, false
	}
	return out[:len(s.pieces)], true
}
