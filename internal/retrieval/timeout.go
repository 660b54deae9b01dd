package retrieval

import (
	"context"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
)

// WithTimeout is x with a time limit of d on every Search, Documents and
// Cosines call, each failed call counted on m (optional) under backend. When
// x is a Writer or a CosineReader the result is one too (Put and Count are
// not limited).
func WithTimeout(x Index, backend string, d time.Duration, m errs.BackendErrors) Index {
	t := timedIndex{x: x, backend: backend, d: d, m: m}
	w, isWriter := x.(Writer)
	c, isCosines := x.(CosineReader)
	switch {
	case isWriter && isCosines:
		return struct {
			timedIndex
			Writer
			timedCosines
		}{t, w, timedCosines{t, c}}
	case isWriter:
		return struct {
			timedIndex
			Writer
		}{t, w}
	case isCosines:
		return struct {
			timedIndex
			timedCosines
		}{t, timedCosines{t, c}}
	}
	return t
}

type timedCosines struct {
	t timedIndex
	c CosineReader
}

func (t timedCosines) Cosines(ctx context.Context, v []float32, ids []string, f Filter) (out map[string]float64, err error) {
	err = errs.Bounded(ctx, t.t.d, t.t.backend, "cosines", t.t.m, func(ctx context.Context) error { out, err = t.c.Cosines(ctx, v, ids, f); return err })
	return out, err
}

type timedIndex struct {
	x       Index
	backend string
	d       time.Duration
	m       errs.BackendErrors
}

func (t timedIndex) Search(ctx context.Context, q Query) (out []Hit, err error) {
	err = errs.Bounded(ctx, t.d, t.backend, "search", t.m, func(ctx context.Context) error { out, err = t.x.Search(ctx, q); return err })
	return out, err
}

func (t timedIndex) Documents(ctx context.Context, ids []string) (out []Document, err error) {
	err = errs.Bounded(ctx, t.d, t.backend, "documents", t.m, func(ctx context.Context) error { out, err = t.x.Documents(ctx, ids); return err })
	return out, err
}
