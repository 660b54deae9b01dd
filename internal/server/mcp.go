package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/dmar-kg/dmar/internal/errs"
)

// mcpPath is the Model Context Protocol endpoint (streamable HTTP). It is
// authenticated like every REST route, and every JSON-RPC message it
// carries is charged to the key's rate limit (a batch of n costs n); the
// REST requests its tool calls make in process are not charged again.
const mcpPath = "/mcp"

// DefaultMCPMaxBodyBytes and DefaultMCPMaxBatch are Config.MCPMaxBodyBytes
// and Config.MCPMaxBatch when the configuration leaves them 0. A body must
// hold a put_documents call of a few documents; a batch's messages run at
// once, so a batch of 16 costs what 16 REST requests at once cost.
const (
	DefaultMCPMaxBodyBytes = 1 << 20
	DefaultMCPMaxBatch     = 16
)

// keyStateKey holds the caller's *keyState in the gin context, set by
// authenticate: POST /mcp charges its messages to it.
const keyStateKey = "api_key_state"

// mcpCharged marks the context of a POST /mcp whose messages were charged:
// the in-process REST requests of its tool calls carry it, and are not
// charged a second time. Only this package can set it.
type mcpCharged struct{}

// mcpRoute serves Config.MCP, built over this server, at POST /mcp: the
// body and the batch are bounded and charged before the MCP handler reads
// them.
func (s *Server) mcpRoute(r *gin.Engine, jsonBody gin.HandlerFunc) {
	var h http.Handler
	if s.cfg.MCP != nil {
		h = s.cfg.MCP(s)
	}
	r.POST(mcpPath, jsonBody, func(c *gin.Context) {
		if h == nil {
			s.fail(c, errs.E(errs.NotFound, "this server has no MCP endpoint"))
			return
		}
		body, err := readBody(c.Request.Body, s.cfg.MCPMaxBodyBytes)
		if err != nil {
			if e, ok := errs.As(err); ok && e.Code == errs.TooLarge {
				err = &errs.Error{Code: errs.TooLarge, Field: "body",
					Message: fmt.Sprintf("the MCP request body is over the server's limit of %d bytes (server.mcp_max_body_bytes); send fewer messages or smaller documents per request", s.cfg.MCPMaxBodyBytes)}
			}
			s.fail(c, err)
			return
		}
		n := countMessages(body)
		if n > s.cfg.MCPMaxBatch {
			s.fail(c, &errs.Error{Code: errs.TooLarge, Field: "batch",
				Message: fmt.Sprintf("a JSON-RPC batch of %d messages is over the server's limit of %d (server.mcp_max_batch); send fewer per request", n, s.cfg.MCPMaxBatch)})
			return
		}
		if !s.chargeMCP(c, n) {
			return
		}
		c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), mcpCharged{}, true))
		c.Request.Body = io.NopCloser(bytes.NewReader(body))
		c.Request.ContentLength = int64(len(body))
		h.ServeHTTP(c.Writer, c.Request)
	})
}

// countMessages is the number of JSON-RPC messages in a body: a batch's
// length, else 1 (a body that is not JSON is the MCP handler's to refuse).
func countMessages(body []byte) int {
	if b := bytes.TrimLeft(body, " \t\r\n"); len(b) == 0 || b[0] != '[' {
		return 1
	}
	var batch []json.RawMessage
	if json.Unmarshal(body, &batch) != nil {
		return 1
	}
	return max(1, len(batch))
}

// chargeMCP charges n messages to the caller's key, or refuses the request
// with 429 (and false).
func (s *Server) chargeMCP(c *gin.Context, n int) bool {
	v, _ := c.Get(keyStateKey)
	k, _ := v.(*keyState)
	if k == nil || k.limiter == nil {
		return true
	}
	r := k.limiter.ReserveN(time.Now(), n)
	if !r.OK() {
		s.cfg.Metrics.rateLimited.WithLabelValues(k.name).Inc()
		s.fail(c, &errs.Error{Code: errs.RateLimited, Field: "batch", RetryAfter: time.Second,
			Message: fmt.Sprintf("a batch of %d messages is more than API key %q may send at once (burst %d); send fewer per request", n, k.name, k.limiter.Burst())})
		return false
	}
	if d := r.Delay(); d > 0 {
		r.Cancel()
		s.cfg.Metrics.rateLimited.WithLabelValues(k.name).Inc()
		s.fail(c, &errs.Error{Code: errs.RateLimited, Message: fmt.Sprintf("rate limit of API key %q exceeded (%d MCP messages)", k.name, n), RetryAfter: ceilSecond(d)})
		return false
	}
	return true
}
