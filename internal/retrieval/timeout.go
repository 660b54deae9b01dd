package retrieval

import (
	"context"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
)

// WithTimeout is x with a time limit of d on every Search and Documents
// call, each failed call counted on m (optional) under backend. When x is a
// Writer the result is one too (Put and Count are not limited).
func WithTimeout(x Index, backend string, d time.Duration, m errs.BackendErrors) Index {
	t := timedIndex{x: x, backend: backend, d: d, m: m}
	if w, ok := x.(Writer); ok {
		return struct {
			timedIndex
			Writer
		}{t, w}
	}
	return t
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
