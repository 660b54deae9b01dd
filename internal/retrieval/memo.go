package retrieval

import (
	"context"
	"sync"
)

// SearchMemo is one request's scratch for index backends: a backend may keep
// a sub-search's result there and reuse it when the same request asks for it
// again (dmar's two stages search with the same enc(Q) under stage2_vector
// question, so the second would repeat the first's vector scan). It lives
// as long as the request's context, so nothing is shared between requests;
// backends that do not use it ignore it.
type SearchMemo struct {
	mu sync.Mutex
	m  map[any]any
}

type memoKey struct{}

// WithSearchMemo returns ctx carrying a new, empty SearchMemo.
func WithSearchMemo(ctx context.Context) context.Context {
	return context.WithValue(ctx, memoKey{}, &SearchMemo{m: map[any]any{}})
}

// SearchMemoFrom is ctx's SearchMemo, nil when it carries none.
func SearchMemoFrom(ctx context.Context) *SearchMemo {
	m, _ := ctx.Value(memoKey{}).(*SearchMemo)
	return m
}

// Load returns what was stored under key. A nil memo holds nothing.
func (m *SearchMemo) Load(key any) (any, bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[key]
	return v, ok
}

// Store keeps v under key (comparable, and private to the backend's
// package so that backends cannot collide). A nil memo keeps nothing.
func (m *SearchMemo) Store(key, v any) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[key] = v
}
