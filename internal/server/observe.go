package server

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"regexp"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
)

// RequestIDHeader carries the request id both ways.
const RequestIDHeader = "X-Request-ID"

// saneID is what an incoming request id may look like; anything else (too
// long, spaces, quotes, control bytes) is replaced by a fresh id.
var saneID = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

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
	s.cfg.Metrics.requests.WithLabelValues(route, c.Request.Method, strconv.Itoa(status)).Inc()
	s.cfg.Metrics.latency.WithLabelValues(route).Observe(d.Seconds())
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelWarn
	}
	// The path is logged, never the query string, headers or body: they may
	// carry keys or personal text.
	attrs := []slog.Attr{slog.String("request_id", id), slog.String("method", c.Request.Method), slog.String("route", route),
		slog.Int("status", status), slog.Float64("duration_ms", float64(d.Microseconds())/1000), slog.Int("bytes", c.Writer.Size())}
	if k := c.GetString("api_key"); k != "" {
		attrs = append(attrs, slog.String("api_key", k))
	}
	s.cfg.Logger.LogAttrs(c.Request.Context(), level, "request", attrs...)
}
