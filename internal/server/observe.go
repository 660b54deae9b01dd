package server

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/gin-gonic/gin"
)

// RequestIDHeader carries the request id both ways.
const RequestIDHeader = "X-Request-ID"

// saneID is what an incoming request id may look like; anything else (too
// long, spaces, quotes, control bytes) is replaced by a fresh id.
var saneID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// maxLoggedMethod caps the method in a log line; a client chooses it.
// maxLoggedErr caps an error's cause in the log line of a 5xx.
const (
	maxLoggedMethod = 32
	maxLoggedErr    = 2048
)

// knownMethods are the method label's values; every other method string a
// client sends is counted as "other", so /metrics cannot grow with them.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true, http.MethodPatch: true,
	http.MethodDelete: true, http.MethodOptions: true, http.MethodConnect: true, http.MethodTrace: true,
}

func methodLabel(m string) string {
	if knownMethods[m] {
		return m
	}
	return "other"
}

// clip is errs.Clip: a client value cut to n characters for logs and messages.
func clip(s string, n int) string { return errs.Clip(s, n) }

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// observe gives each request an id (a sane incoming X-Request-ID, else a new
// one), returns it in the header, counts and times the request by route and
// writes one structured access-log line.
func (s *Server) observe(c *gin.Context) {
	start := time.Now()
	id := c.GetHeader(RequestIDHeader)
	if !saneID.MatchString(id) {
		id = newID()
	}
	c.Header(RequestIDHeader, id)
	c.Set("request_id", id)
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	status := c.Writer.Status()
	d := time.Since(start)
	s.cfg.Metrics.requests.WithLabelValues(route, methodLabel(c.Request.Method), strconv.Itoa(status)).Inc()
	s.cfg.Metrics.latency.WithLabelValues(route).Observe(d.Seconds())
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelWarn
	}
	// The path is logged, never the query string, headers or body: they may
	// carry keys or personal text.
	attrs := []slog.Attr{slog.String("request_id", id), slog.String("method", clip(c.Request.Method, maxLoggedMethod)), slog.String("route", route),
		slog.Int("status", status), slog.Float64("duration_ms", float64(d.Microseconds())/1000), slog.Int("bytes", c.Writer.Size())}
	if k := c.GetString("api_key"); k != "" {
		attrs = append(attrs, slog.String("api_key", k))
	}
	s.cfg.Logger.LogAttrs(c.Request.Context(), level, "request", attrs...)
}

// maxEcho caps a client-supplied value repeated in an error message.
const maxEcho = 64
