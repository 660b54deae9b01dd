package memindex

import (
	"context"
	"slices"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// vectorMemoKey names a vector sub-search in a request's SearchMemo: the
// generation it read and how many documents it kept. Only unfiltered
// searches are kept.
type vectorMemoKey struct {
	gen  *gen
	keep int
}

type vectorMemo struct {
	vec []float32 // the query vector, copied
	top []scoredDoc
}

// memoVector is vector's result for an unfiltered search, taken from the
// request's memo when the same request already ran it with an equal vector
// on this generation (its lists are only read, so they are shared).
func (x *gen) memoVector(ctx context.Context, v []float32, allow []bool, keep int) ([]scoredDoc, error) {
	memo := retrieval.SearchMemoFrom(ctx)
	if memo == nil || allow != nil {
		return x.vector(ctx, v, allow, keep)
	}
	key := vectorMemoKey{x, keep}
	if m, ok := memo.Load(key); ok {
		if m := m.(vectorMemo); slices.Equal(m.vec, v) {
			return m.top, nil
		}
	}
	top, err := x.vector(ctx, v, allow, keep)
	if err != nil {
		return nil, err
	}
	memo.Store(key, vectorMemo{vec: slices.Clone(v), top: top})
	return top, nil
}
