package config

import (
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

var (
	hexSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)
	origin    = regexp.MustCompile(`^https?://[A-Za-z0-9.-]+(:\d{1,5})?$`)
)

// Validate names every wrong field of c, section by section.
func (c *Config) Validate() Problems {
	var ps Problems
	c.validateData(&ps)
	c.validateModels(&ps)
	c.validateChat(&ps)
	c.validateWeaviate(&ps)
	c.Server.validate(&ps)
	c.TextGraph.validate(&ps)
	return ps
}

// validateData checks the backends and what they load: the graph and its
// bundle, the index and its corpus, the state folder and the method.
func (c *Config) validateData(ps *Problems) {
	if c.Graph == "embedded" || c.Graph == "" {
		if dir := c.BundleDir(); dir == "" {
			ps.add("data", "no KG bundle: set data (or kg) to a folder with triples.tsv, entities.jsonl and relations.json")
		} else if _, err := os.Stat(filepath.Join(dir, "triples.tsv")); err != nil {
			ps.add(fieldOf(c.KG, "kg", "data"), "%s has no triples.tsv (want a KG bundle folder)", dir)
		}
	} else if _, err := ParseGraph(c.Graph); err != nil {
		ps.add("graph", "%v", err)
	}
	if _, err := ParseIndex(c.Index); err != nil {
		ps.add("index", "%v", err)
	}
	if (c.Index == "embedded" || c.Index == "") && c.Corpus == "" && c.Data == "" {
		ps.add("corpus", "no corpus: set data or corpus")
	}
	if c.State == "" {
		ps.add("state", "must not be empty")
	}
	if !slices.Contains(Methods, c.Method) {
		ps.add("method", "%q: want one of %s", c.Method, strings.Join(Methods, ", "))
	}
}

// validateModels checks models.* and ort.*.
func (c *Config) validateModels(ps *Problems) {
	if !slices.Contains(EncoderNames, c.Models.Encoder) {
		ps.add("models.encoder", "%q: want one of %s", c.Models.Encoder, strings.Join(EncoderNames, ", "))
	}
	if c.Models.EncoderDir == "" {
		ps.add("models.encoder_dir", "must not be empty")
	}
	if c.Models.EncoderBatch < 1 {
		ps.add("models.encoder_batch", "must be 1 or more, got %d", c.Models.EncoderBatch)
	}
	if c.Models.DocTokens < 1 || c.Models.DocTokens > 256 {
		ps.add("models.doc_tokens", "must be between 1 and 256, got %d", c.Models.DocTokens)
	}
	if c.ORT.Device != "cpu" && c.ORT.Device != "cuda" {
		ps.add("ort.device", "must be cpu or cuda, got %q", c.ORT.Device)
	}
	if c.ORT.Threads < 0 {
		ps.add("ort.threads", "must be 0 (half the CPUs) or more, got %d", c.ORT.Threads)
	}
	if c.ORT.WritePriority != "low" && c.ORT.WritePriority != "idle" && c.ORT.WritePriority != "normal" {
		ps.add("ort.write_priority", "must be low, idle or normal, got %q", c.ORT.WritePriority)
	}
	if c.ORT.CUDADevice < 0 {
		ps.add("ort.cuda_device", "must be 0 or more, got %d", c.ORT.CUDADevice)
	}
}

// validateChat checks chat.*.
func (c *Config) validateChat(ps *Problems) {
	if c.Chat.BaseURL != "" {
		if msg := checkURL(c.Chat.BaseURL, "http", "https"); msg != "" {
			ps.add("chat.base_url", "%q: %s", c.Chat.BaseURL, msg)
		}
		if c.Chat.Model == "" {
			ps.add("chat.model", "must be set with chat.base_url")
		}
	}
	if c.Chat.Timeout <= 0 {
		ps.add("chat.timeout", "must be positive, got %s", c.Chat.Timeout)
	}
}

// validate checks server.*: the listener and its time limits, then the
// API keys, pprof and the limits of a request.
func (s *Server) validate(ps *Problems) {
	if _, _, err := net.SplitHostPort(s.Addr); err != nil {
		ps.add("server.addr", "%q is not HOST:PORT", s.Addr)
	}
	if s.RequestTimeout <= 0 || s.RequestTimeout > 10*time.Minute {
		ps.add("server.request_timeout", "must be between 0 and 10m, got %s", s.RequestTimeout)
	}
	if s.BackendTimeout <= 0 || (s.RequestTimeout > 0 && s.BackendTimeout > s.RequestTimeout) {
		ps.add("server.backend_timeout", "must be positive and at most request_timeout (%s), got %s", s.RequestTimeout, s.BackendTimeout)
	}
	if s.ShutdownTimeout <= 0 || s.ShutdownTimeout > 5*time.Minute {
		ps.add("server.shutdown_timeout", "must be between 0 and 5m, got %s", s.ShutdownTimeout)
	}
	for i, o := range s.CORSOrigins {
		if o != "*" && !origin.MatchString(o) {
			ps.add(fmt.Sprintf("server.cors_origins[%d]", i), "%q is not * or an origin like https://app.example.org", o)
		}
	}
	s.Auth.validate(ps)
	if s.Pprof {
		host, _, err := net.SplitHostPort(s.PprofAddr)
		if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			ps.add("server.pprof_addr", "%q must be a loopback HOST:PORT (pprof is never exposed)", s.PprofAddr)
		}
	}
	s.validateLimits(ps)
}

// validateLimits checks the limits of one request and the log level.
func (s *Server) validateLimits(ps *Problems) {
	if s.MaxResponseBytes < 64<<10 {
		ps.add("server.max_response_bytes", "must be at least 65536, got %d", s.MaxResponseBytes)
	}
	if s.MCPMaxBodyBytes < 64<<10 || s.MCPMaxBodyBytes > 64<<20 {
		ps.add("server.mcp_max_body_bytes", "must be between 65536 and 67108864, got %d", s.MCPMaxBodyBytes)
	}
	if s.MCPMaxBatch < 1 || s.MCPMaxBatch > 1000 {
		ps.add("server.mcp_max_batch", "must be between 1 and 1000, got %d", s.MCPMaxBatch)
	}
	if s.EncoderCalls < 1 || s.EncoderCalls > 64 {
		ps.add("server.encoder_calls", "must be between 1 and 64, got %d", s.EncoderCalls)
	}
	if s.EncoderBatchWindow < 0 || s.EncoderBatchWindow > 100*time.Millisecond {
		ps.add("server.encoder_batch_window", "must be between 0 (off) and 100ms, got %s", s.EncoderBatchWindow)
	}
	if s.MaxRequestCost < 10_000 {
		ps.add("server.max_request_cost", "must be at least 10000 game evaluations, got %d", s.MaxRequestCost)
	}
	switch s.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		ps.add("server.log_level", "must be debug, info, warn or error, got %q", s.LogLevel)
	}
}

// validate checks server.auth.keys: named once each, each a distinct
// SHA-256, with a finite rate and burst.
func (a *Auth) validate(ps *Problems) {
	names := map[string]bool{}
	hashes := map[string]int{}
	for i, k := range a.Keys {
		f := fmt.Sprintf("server.auth.keys[%d]", i)
		if k.Name == "" {
			ps.add(f+".name", "must not be empty (it labels the key in logs and metrics)")
		} else if names[k.Name] {
			ps.add(f+".name", "%q is used twice", k.Name)
		}
		names[k.Name] = true
		if !hexSHA256.MatchString(k.SHA256) {
			ps.add(f+".sha256", "must be the 64 lowercase hex digits of the key's SHA-256 (dmar config hash-key prints it)")
		} else if j, dup := hashes[k.SHA256]; dup {
			// One key would carry two names and two rate limits, and which one
			// applies would depend on the order of the list.
			ps.add(f+".sha256", "is the same key as server.auth.keys[%d]", j)
		} else {
			hashes[k.SHA256] = i
		}
		if math.IsNaN(k.Rate) || math.IsInf(k.Rate, 0) {
			// YAML's .nan and .inf parse as floats; NaN compares false with
			// everything and would slip past the range check below as unlimited.
			ps.add(f+".rate", "must be a finite number of requests per second (0: unlimited), got %g", k.Rate)
		} else if k.Rate < 0 {
			ps.add(f+".rate", "must be 0 (unlimited) or more requests per second, got %g", k.Rate)
		}
		if k.Burst < 0 {
			ps.add(f+".burst", "must be 0 (default) or more, got %d", k.Burst)
		}
	}
}

func fieldOf(v, ifSet, otherwise string) string {
	if v != "" {
		return ifSet
	}
	return otherwise
}
