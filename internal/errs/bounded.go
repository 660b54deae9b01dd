package errs

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// BackendErrors counts failed backend calls (server.Metrics implements it).
type BackendErrors interface {
	BackendError(backend, op string)
}

// Bounded runs one backend call under its own time limit d. A call that runs
// past it while the request still has time is an outage of that backend
// (Unavailable): the pipeline degrades or the API answers 503. Failed calls
// are counted on m when it is not nil.
func Bounded(ctx context.Context, d time.Duration, backend, op string, m BackendErrors, call func(context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := call(cctx)
	if err == nil {
		return nil
	}
	if m != nil {
		m.BackendError(backend, op)
	}
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return Unavail(fmt.Errorf("%s %s: no answer within %s: %w", backend, op, d, err), backend)
	}
	return err
}
