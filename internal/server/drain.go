package server

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/dmar-kg/dmar/internal/errs"
)

// Drain makes the server refuse new requests with 503 and Retry-After (and
// /readyz fail), so that a load balancer sends them elsewhere, while the
// requests already admitted finish. /healthz keeps answering: the process
// is alive.
func (s *Server) Drain() { s.draining.Store(true) }

// InFlight is the number of admitted requests not yet finished.
func (s *Server) InFlight() int64 { return s.inflight.Load() }

// WaitIdle returns when no admitted request is in flight, or ctx's error.
func (s *Server) WaitIdle(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for s.inflight.Load() > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

func (s *Server) admit(c *gin.Context) {
	if s.draining.Load() && c.Request.URL.Path != "/healthz" {
		c.Header("Connection", "close")
		s.fail(c, &errs.Error{Code: errs.Unavailable, Message: "the server is shutting down; retry on another replica", RetryAfter: 2 * time.Second})
		return
	}
	s.inflight.Add(1)
	defer s.inflight.Add(-1)
	c.Next()
}

var _ http.Handler = (*Server)(nil)
