// Package server is dmar's REST API on gin: retrieval, linking, subgraphs,
// health, readiness, Prometheus metrics and the OpenAPI document. New builds
// the router in one place; tests run it under httptest.
package server

import (
	"context"
	_ "embed"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/dmar-kg/dmar/internal/answer"
	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/ui"
	"github.com/dmar-kg/dmar/internal/verify"
)

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3 document served at /openapi.json.
func OpenAPI() []byte { return openAPI }

// Checker is a named readiness check (a backend's Ping).
type Checker struct {
	Name string
	Ping func(ctx context.Context) error
}

// Config holds the server's parts.
type Config struct {
	Pipeline       *pipeline.Pipeline
	Metrics        *Metrics // nil: a fresh one
	Logger         *slog.Logger
	Ready          []Checker
	RequestTimeout time.Duration // per request; default 30s
	// APIKeys, when not empty, turn authentication on for every route
	// but /healthz, /readyz and /openapi.json.
	APIKeys []APIKey
	// CORSOrigins are the origins browsers may call from ("*": any);
	// empty: CORS off.
	CORSOrigins []string
	// AllowedHosts are the Host header names (port ignored, case-insensitive;
	// "*": any) answered besides the loopback ones. With none and no APIKeys,
	// only loopback Hosts (127.0.0.0/8, localhost, [::1]) are answered: a
	// keyless server must not be reachable by DNS rebinding.
	AllowedHosts []string
	// MaxResponseBytes bounds a response body (0: DefaultMaxResponseBytes);
	// a larger one is not sent, the request is refused with 422.
	MaxResponseBytes int
	// Documents serves /v1/documents; nil answers them with 503.
	Documents DocumentStore
	// Answerer writes POST /v1/answer's answers (nil: that route answers
	// 503); AnswerModel names its model in the responses.
	Answerer    *answer.Answerer
	AnswerModel string
	// MCP builds the Model Context Protocol handler served at POST /mcp
	// from the REST handler its tools call (nil: /mcp answers 404).
	MCP func(api http.Handler) http.Handler
	// MCPMaxBodyBytes bounds a POST /mcp body (0: DefaultMCPMaxBodyBytes);
	// MCPMaxBatch bounds the messages of one JSON-RPC batch (0:
	// DefaultMCPMaxBatch). Each message of a batch runs at once, so the
	// batch is what one request can buy.
	MCPMaxBodyBytes int
	MCPMaxBatch     int
	// Verifier gives POST /v1/verify's verdicts with the same generator
	// (nil: that route answers 503).
	Verifier *verify.Verifier
}

// DefaultMaxResponseBytes is MaxResponseBytes when the configuration leaves it 0.
const DefaultMaxResponseBytes = 4 << 20

// Server is the HTTP handler: the gin router and its middleware state.
type Server struct {
	*gin.Engine
	cfg      Config
	keys     []*keyState
	backoff  *backoff
	draining atomic.Bool
	inflight atomic.Int64
}

// New builds the router. It panics on an API key that is not a SHA-256
// (the configuration validates them first).
func New(cfg Config) *Server {
	gin.SetMode(gin.ReleaseMode)
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.MCPMaxBodyBytes <= 0 {
		cfg.MCPMaxBodyBytes = DefaultMCPMaxBodyBytes
	}
	if cfg.MCPMaxBatch <= 0 {
		cfg.MCPMaxBatch = DefaultMCPMaxBatch
	}
	if !ui.HasGraphLibrary() {
		cfg.Logger.Warn("the explorer page's graph library is not in this build: the page lists subgraphs instead of drawing them (make setup, then rebuild)", "file", "internal/ui/static/"+ui.GraphLibrary)
	}
	keys, err := newKeys(cfg.APIKeys)
	if err != nil {
		panic(err)
	}
	r := gin.New()
	s := &Server{Engine: r, cfg: cfg, keys: keys, backoff: newBackoff()}
	r.Use(gin.Recovery(), s.observe, s.admit, s.checkHost, s.cors, s.authenticate, s.timeout)
	jsonBody := requireJSON(s)
	r.POST("/v1/retrieve", jsonBody, s.retrieve)
	r.POST("/v1/link", jsonBody, s.link)
	s.documentRoutes(r, jsonBody)
	r.POST("/v1/answer", jsonBody, s.answer)
	s.mcpRoute(r, jsonBody)
	r.POST("/v1/verify", jsonBody, s.verifyClaim)
	// HEAD is answered wherever GET is (net/http drops the body).
	get := func(path string, h gin.HandlerFunc) { r.GET(path, h); r.HEAD(path, h) }
	get("/v1/entities/:qid/subgraph", s.subgraph)
	get("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	get("/readyz", s.ready)
	get("/metrics", gin.WrapH(promhttp.HandlerFor(cfg.Metrics.Registry, promhttp.HandlerOpts{})))
	get("/openapi.json", func(c *gin.Context) { c.Data(http.StatusOK, "application/json", openAPI) })
	// The explorer page (internal/ui): static files, open like /openapi.json.
	page := gin.WrapH(ui.Handler())
	get("/", page)
	get(strings.TrimSuffix(ui.Prefix, "/")+"/*file", page)
	r.NoRoute(func(c *gin.Context) {
		s.fail(c, errs.E(errs.NotFound, "no route %s %s", clip(c.Request.Method, maxEcho), clip(c.Request.URL.Path, maxEcho)))
	})
	// A known path with another method: 405, and gin sets Allow.
	r.HandleMethodNotAllowed = true
	r.NoMethod(func(c *gin.Context) {
		if s.onlyPost(c) {
			return
		}
		s.fail(c, errs.E(errs.BadMethod, "method %s is not allowed on %s; allowed: %s", clip(c.Request.Method, maxEcho),
			clip(c.Request.URL.Path, maxEcho), c.Writer.Header().Get("Allow")))
	})
	return s
}

func (s *Server) timeout(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.cfg.RequestTimeout)
	defer cancel()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
}

// fail writes err through the one mapping from codes to statuses. Internal
// errors are logged; clients see a safe message.
func (s *Server) fail(c *gin.Context, err error) {
	e, ok := errs.As(err)
	switch {
	case ok:
	case errors.Is(err, context.DeadlineExceeded):
		e = &errs.Error{Code: errs.Unavailable, Message: "the request timed out", Err: err, RetryAfter: time.Second}
	case errors.Is(err, context.Canceled):
		e = &errs.Error{Code: errs.Unavailable, Message: "the request was cancelled", Err: err}
	default:
		e = &errs.Error{Code: errs.Internal, Message: "internal error", Err: err}
	}
	status := errs.Status(e.Code)
	if status >= 500 {
		// The cause may quote client text (a backend's error); it is capped.
		s.cfg.Logger.Error("request failed", "request_id", c.GetString("request_id"), "route", c.FullPath(), "status", status, "err", clip(err.Error(), maxLoggedErr))
	}
	if e.RetryAfter > 0 || status == http.StatusServiceUnavailable || status == http.StatusTooManyRequests {
		secs := int(e.RetryAfter.Seconds())
		if secs < 1 {
			secs = 1
		}
		c.Header("Retry-After", strconv.Itoa(secs))
	}
	body := toErrorBody(e)
	// A safety net under the clips at each echo: no message is unbounded.
	body.Error.Message = clip(body.Error.Message, maxMessage)
	body.Error.Field = clip(body.Error.Field, maxEcho)
	c.AbortWithStatusJSON(status, body)
}

func (s *Server) retrieve(c *gin.Context) {
	p := s.cfg.Pipeline
	req, err := DecodeRetrieve(c.Request.Body, p.Defaults())
	if err != nil {
		s.fail(c, pipeline.RemovedOption(err))
		return
	}
	res, err := p.Retrieve(c.Request.Context(), req.Query, req.Options)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.reply(c, ToRetrieveResponse(res), retrieveSizers(req.Options, p.Defaults()))
}

func (s *Server) link(c *gin.Context) {
	req, err := DecodeLink(c.Request.Body)
	if err != nil {
		s.fail(c, err)
		return
	}
	ms, err := s.cfg.Pipeline.Link(c.Request.Context(), req.Text)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, api.LinkResponse{Mentions: ms})
}

func (s *Server) subgraph(c *gin.Context) {
	qid := c.Param("qid")
	if !kg.ValidQID(qid) {
		s.fail(c, errs.Field("qid", "%q is not a Wikidata item id (Q followed by digits)", clip(qid, maxEcho)))
		return
	}
	p := s.cfg.Pipeline.Defaults().SubgraphParams()
	for _, q := range []struct {
		name string
		dst  *int
		r    pipeline.SubgraphRange
	}{{"hops", &p.Hops, pipeline.HopsRange}, {"limit", &p.MaxNodes, pipeline.MaxNodesRange}, {"hub_degree", &p.HubDegree, pipeline.HubDegreeRange}} {
		// Absent keeps the default; present, even empty, must be a number.
		v, given := c.GetQuery(q.name)
		if !given {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || !q.r.Contains(n) {
			s.fail(c, errs.Field(q.name, "must be an integer between %d and %d, got %q", q.r.Min, q.r.Max, clip(v, maxEcho)))
			return
		}
		*q.dst = n
	}
	sgs, err := s.cfg.Pipeline.Graph().Subgraphs(c.Request.Context(), []string{qid}, p)
	if err != nil {
		s.fail(c, err)
		return
	}
	sg, ok := sgs[qid]
	if !ok {
		s.fail(c, errs.E(errs.NotFound, "entity %s is not in the knowledge graph", clip(qid, maxEcho)))
		return
	}
	s.reply(c, ToSubgraph(sg), subgraphSizers(p, s.cfg.Pipeline.Defaults().SubgraphParams()))
}

func (s *Server) ready(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 3*time.Second)
	defer cancel()
	checks := gin.H{}
	ok := true
	for _, ch := range s.cfg.Ready {
		if err := ch.Ping(ctx); err != nil {
			ok = false
			checks[ch.Name] = err.Error()
		} else {
			checks[ch.Name] = "ok"
		}
	}
	status := http.StatusOK
	state := "ready"
	if !ok {
		status = http.StatusServiceUnavailable
		state = "not ready"
		c.Header("Retry-After", "5")
	}
	c.JSON(status, gin.H{"status": state, "checks": checks})
}
