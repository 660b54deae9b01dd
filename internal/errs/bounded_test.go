package errs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
)

type countErrs map[string]int

func (c countErrs) BackendError(backend, op string) { c[backend+"/"+op]++ }

func TestBoundedCall(t *testing.T) {
	m := countErrs{}
	slow := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	start := time.Now()
	err := errs.Bounded(context.Background(), 20*time.Millisecond, "neo4j", "link", m, slow)
	if errs.CodeOf(err) != errs.Unavailable || time.Since(start) > 2*time.Second {
		t.Errorf("a call past its limit: %v (code %s) after %s, want unavailable", err, errs.CodeOf(err), time.Since(start))
	}
	// The request's own deadline is not the backend's fault.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	err = errs.Bounded(ctx, time.Second, "neo4j", "link", m, slow)
	if !errors.Is(err, context.DeadlineExceeded) || errs.CodeOf(err) == errs.Unavailable {
		t.Errorf("request deadline: %v", err)
	}
	if err := errs.Bounded(context.Background(), time.Second, "neo4j", "link", m, func(context.Context) error { return nil }); err != nil {
		t.Error(err)
	}
	if m["neo4j/link"] != 2 {
		t.Errorf("backend errors counted %v, want 2", m)
	}
}
