package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"math"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/ui"
)

// APIKey is one accepted key, known only by its SHA-256, with its own rate
// limit (requests per second; 0: unlimited).
type APIKey struct {
	Name   string
	SHA256 string // lowercase hex
	Rate   float64
	Burst  int // 0: max(1, ceil(Rate))
	// Write lets the key change documents (PUT and DELETE /v1/documents);
	// keys without it are read-only.
	Write bool
}

type keyState struct {
	name    string
	sum     [sha256.Size]byte
	limiter *rate.Limiter // nil: unlimited
	write   bool
}

// open paths answer without a key: load balancers and orchestrators probe them.
var openPaths = map[string]bool{"/healthz": true, "/readyz": true, "/openapi.json": true}

func newKeys(keys []APIKey) ([]*keyState, error) {
	var out []*keyState
	for _, k := range keys {
		b, err := hex.DecodeString(k.SHA256)
		if err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("api key %q: sha256 is not 64 hex digits", k.Name)
		}
		ks := &keyState{name: k.Name, write: k.Write}
		copy(ks.sum[:], b)
		if k.Rate > 0 {
			burst := k.Burst
			if burst <= 0 {
				burst = max(1, int(math.Ceil(k.Rate)))
			}
			ks.limiter = rate.NewLimiter(rate.Limit(k.Rate), burst)
		}
		out = append(out, ks)
	}
	return out, nil
}

// presentedKey reads the key from "Authorization: Bearer KEY" (the scheme
// in any case, RFC 9110 §11.1) or "X-API-Key: KEY".
func presentedKey(hd http.Header) string {
	if h := hd.Get("Authorization"); h != "" {
		if scheme, k, ok := strings.Cut(strings.TrimSpace(h), " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(k)
		}
	}
	return strings.TrimSpace(hd.Get("X-API-Key"))
}

// lookup finds a key by its hash; every stored hash is compared, in
// constant time.
func (s *Server) lookup(key string) *keyState {
	sum := sha256.Sum256([]byte(key))
	var found *keyState
	for _, k := range s.keys {
		if subtle.ConstantTimeCompare(sum[:], k.sum[:]) == 1 {
			found = k
		}
	}
	return found
}

// CanWrite says whether a request presenting these headers may change
// documents: any request when no API key is configured, else one with a
// known key that has write permission.
func (s *Server) CanWrite(h http.Header) bool {
	if len(s.keys) == 0 {
		return true
	}
	k := s.lookup(presentedKey(h))
	return k != nil && k.write
}

// authenticate admits requests with a known key, within its rate limit.
// Only hashes are kept; every stored hash is compared in constant time.
func (s *Server) authenticate(c *gin.Context) {
	if len(s.keys) == 0 || openPaths[c.Request.URL.Path] || ui.IsPagePath(c.Request.URL.Path) {
		c.Next()
		return
	}
	ip := c.RemoteIP()
	if d := s.backoff.blocked(ip); d > 0 {
		s.cfg.Metrics.authFailures.WithLabelValues("backoff").Inc()
		s.fail(c, &errs.Error{Code: errs.RateLimited, Message: "too many wrong API keys from this address; retry later", RetryAfter: ceilSecond(d)})
		return
	}
	key := presentedKey(c.Request.Header)
	if key == "" {
		s.cfg.Metrics.authFailures.WithLabelValues("missing").Inc()
		c.Header("WWW-Authenticate", `Bearer realm="dmar"`)
		s.fail(c, errs.E(errs.Unauthorized, "an API key is required (Authorization: Bearer KEY or X-API-Key)"))
		return
	}
	found := s.lookup(key)
	if found == nil {
		s.backoff.fail(ip)
		s.cfg.Metrics.authFailures.WithLabelValues("unknown").Inc()
		c.Header("WWW-Authenticate", `Bearer realm="dmar", error="invalid_token"`)
		s.fail(c, errs.E(errs.Unauthorized, "the API key is not valid"))
		return
	}
	s.backoff.ok(ip)
	c.Set("api_key", found.name)
	c.Set(writeKey, found.write)
	c.Set(keyStateKey, found)
	// POST /mcp charges its messages itself (a batch costs its length), and
	// the REST requests its tool calls make are not charged again.
	if found.limiter != nil && c.Request.URL.Path != mcpPath && c.Request.Context().Value(mcpCharged{}) == nil {
		r := found.limiter.Reserve()
		if d := r.Delay(); d > 0 {
			r.Cancel()
			s.cfg.Metrics.rateLimited.WithLabelValues(found.name).Inc()
			s.fail(c, &errs.Error{Code: errs.RateLimited, Message: fmt.Sprintf("rate limit of API key %q exceeded", found.name), RetryAfter: ceilSecond(d)})
			return
		}
	}
	c.Next()
}

func ceilSecond(d time.Duration) time.Duration {
	return time.Duration(math.Ceil(d.Seconds())) * time.Second
}

// cors answers browsers only for the configured origins; with none, it adds
// nothing and a cross-origin browser request is refused by the browser.
func (s *Server) cors(c *gin.Context) {
	o := c.Request.Header.Get("Origin")
	if len(s.cfg.CORSOrigins) == 0 || o == "" {
		c.Next()
		return
	}
	allowed := ""
	for _, a := range s.cfg.CORSOrigins {
		if a == "*" || strings.EqualFold(a, o) {
			allowed = a
			break
		}
	}
	c.Header("Vary", "Origin")
	if allowed == "" {
		c.Next()
		return
	}
	if allowed != "*" {
		allowed = o
	}
	c.Header("Access-Control-Allow-Origin", allowed)
	c.Header("Access-Control-Expose-Headers", "X-Request-ID, Retry-After")
	if c.Request.Method == http.MethodOptions && c.Request.Header.Get("Access-Control-Request-Method") != "" {
		c.Header("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE")
		c.Header("Access-Control-Allow-Headers", "Content-Type, Authorization, X-API-Key, X-Request-ID")
		c.Header("Access-Control-Max-Age", strconv.Itoa(600))
		c.AbortWithStatus(http.StatusNoContent)
		return
	}
	c.Next()
}

// checkHost answers only the Hosts the server is meant for. With neither
// API keys nor AllowedHosts, that is loopback only: a page that rebinds its
// own name to 127.0.0.1 still sends its own name as Host.
func (s *Server) checkHost(c *gin.Context) {
	if len(s.cfg.AllowedHosts) == 0 && len(s.keys) > 0 {
		c.Next()
		return
	}
	name := hostName(c.Request.Host)
	if isLoopbackName(name) {
		c.Next()
		return
	}
	for _, a := range s.cfg.AllowedHosts {
		if a == "*" || strings.EqualFold(strings.TrimSuffix(a, "."), name) {
			c.Next()
			return
		}
	}
	s.fail(c, errs.E(errs.Forbidden, "Host %q is not answered: without an API key only loopback hosts are, unless listed in the allowed hosts", clip(c.Request.Host, maxEcho)))
}

// hostName is a Host header's name without port or brackets, and without
// one trailing dot.
func hostName(h string) string {
	if name, _, err := net.SplitHostPort(h); err == nil {
		h = name
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(h, ".")
}

func isLoopbackName(name string) bool {
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}

// requireJSON refuses a body not declared application/json (charset, if
// given, utf-8): a browser sends text/plain, form types, or no type at all
// across origins without a CORS preflight, JSON only after one.
func requireJSON(s *Server) gin.HandlerFunc {
	return func(c *gin.Context) {
		ct := c.GetHeader("Content-Type")
		mt, params, err := mime.ParseMediaType(ct)
		cs, hasCS := params["charset"]
		if err != nil || mt != "application/json" || (hasCS && !strings.EqualFold(cs, "utf-8")) {
			got := "no Content-Type"
			if ct != "" {
				got = fmt.Sprintf("Content-Type %q", clip(ct, maxEcho))
			}
			s.fail(c, errs.E(errs.BadMediaType, "the request body must be sent as Content-Type: application/json (charset utf-8, if given); got %s", got))
			return
		}
		c.Next()
	}
}
