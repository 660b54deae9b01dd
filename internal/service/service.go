// Package service assembles dmar's REST service from a configuration: the
// backends it names (internal/backends), the live documents, the generator
// of answers and verdicts, the API keys, and the MCP tools over the same
// handler. dmar serve runs it over HTTP, dmar mcp over stdio.
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"time"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/httpserve"
	"github.com/dmar-kg/dmar/internal/mcp"
	"github.com/dmar-kg/dmar/internal/server"
)

// Service is the service of Config.
type Service struct {
	Config   config.Config
	Log      *slog.Logger
	Progress io.Writer // the backends' opening progress
	Version  string    // dmar's, as the MCP tools report it
}

// HTTP serves the REST API (with POST /mcp) on Config.Server.Addr until ctx
// ends, then drains; "dmar: serving on URL" goes to stdout once listening.
func (s Service) HTTP(ctx context.Context, stdout io.Writer) error {
	cfg, sc, log := s.Config, s.Config.Server, s.Log
	metrics := server.NewMetrics()
	p, set, err := backends.OpenPipeline(ctx, cfg, s.Progress, log, metrics, true)
	if err != nil {
		return err
	}
	docs, closeDocs, err := liveDocuments(ctx, set, log)
	if err != nil {
		set.Close()
		return err
	}
	defer closeDocs()
	backends.Warm(ctx, p, log)
	var ready []server.Checker
	for _, c := range set.Ready {
		ready = append(ready, server.Checker{Name: c.Name, Ping: c.Ping})
	}
	keys := apiKeys(sc.Auth.Keys)
	h := server.New(server.Config{Pipeline: p, Metrics: metrics, Logger: log, Ready: ready, RequestTimeout: sc.RequestTimeout,
		APIKeys: keys, CORSOrigins: sc.CORSOrigins, AllowedHosts: sc.AllowedHosts, MaxResponseBytes: sc.MaxResponseBytes,
		Answerer: backends.Answerer(cfg.Chat, p.Encoder()), AnswerModel: cfg.Chat.Model, Documents: docs, MCP: s.mcpHandler(cfg.Chat.BaseURL != "", docs != nil),
		MCPMaxBodyBytes: sc.MCPMaxBodyBytes, MCPMaxBatch: sc.MCPMaxBatch, Verifier: backends.Verifier(cfg.Chat, p.Encoder())})
	// The models are freed by the server once every handler has returned
	// (never under a running request), not by a defer here.
	c := httpserve.Config{Addr: sc.Addr, Handler: h, RequestTimeout: sc.RequestTimeout, ShutdownTimeout: sc.ShutdownTimeout, Log: log, Release: set.Close}
	if sc.Pprof {
		c.PprofAddr = sc.PprofAddr
		// Contention and blocking are what a load test needs to see.
		runtime.SetMutexProfileFraction(10)
		runtime.SetBlockProfileRate(int(time.Millisecond))
	}
	c.Started = func(addr net.Addr) {
		log.Info("dmar serving", "addr", "http://"+addr.String(), "graph", cfg.Graph, "index", cfg.Index, "data", cfg.Data,
			"api_keys", len(keys), "cors_origins", sc.CORSOrigins, "request_timeout", sc.RequestTimeout.String(),
			"backend_timeout", sc.BackendTimeout.String(), "pprof", sc.Pprof)
		fmt.Fprintf(stdout, "dmar: serving on http://%s\n", addr)
	}
	return httpserve.Run(ctx, c)
}

// Stdio serves one MCP client on stdin/stdout: the REST API built as HTTP
// builds it, called in process, with key as the caller's API key when API
// keys are configured.
func (s Service) Stdio(ctx context.Context, key string) error {
	cfg, sc, log := s.Config, s.Config.Server, s.Log
	metrics := server.NewMetrics()
	p, set, err := backends.OpenPipeline(ctx, cfg, s.Progress, log, metrics, true)
	if err != nil {
		return err
	}
	defer set.Close()
	docs, closeDocs, err := liveDocuments(ctx, set, log)
	if err != nil {
		return err
	}
	defer closeDocs()
	backends.Warm(ctx, p, log)
	ans := backends.Answerer(cfg.Chat, p.Encoder())
	h := server.New(server.Config{Pipeline: p, Metrics: metrics, Logger: log, RequestTimeout: sc.RequestTimeout,
		APIKeys: apiKeys(sc.Auth.Keys), MaxResponseBytes: sc.MaxResponseBytes, Answerer: ans, AnswerModel: cfg.Chat.Model, Documents: docs})
	svc, err := mcp.New(s.mcpConfig(h, ans != nil, docs != nil, key))
	if err != nil {
		return err
	}
	return svc.RunStdio(ctx)
}

// mcpConfig is the MCP tools' configuration over the REST handler h.
func (s Service) mcpConfig(h http.Handler, answer, documents bool, key string) mcp.Config {
	sc := s.Config.Server
	c := mcp.Config{API: h, Spec: server.OpenAPI(), Answer: answer, Documents: documents, Key: key, Version: s.Version, Logger: s.Log,
		Timeout: sc.RequestTimeout, MaxBodyBytes: int64(sc.MCPMaxBodyBytes), MaxReplyBytes: sc.MaxResponseBytes}
	if srv, ok := h.(*server.Server); ok {
		c.CanWrite = srv.CanWrite
	}
	return c
}

// mcpHandler is POST /mcp: the tools over the server's own REST handler,
// each caller presenting its own key.
func (s Service) mcpHandler(answer, documents bool) func(http.Handler) http.Handler {
	return func(api http.Handler) http.Handler {
		svc, err := mcp.New(s.mcpConfig(api, answer, documents, ""))
		if err != nil {
			s.Log.Error("the MCP endpoint is off", "err", err)
			return nil
		}
		return svc.Handler()
	}
}

// liveDocuments opens set's document store. When another process holds its
// log, documents are off (nil, and a warning): searches still work, the
// document routes answer 503 and the document tools are not offered.
func liveDocuments(ctx context.Context, set *backends.Set, log *slog.Logger) (server.DocumentStore, func(), error) {
	st, err := set.Documents(ctx, log)
	switch {
	case errors.Is(err, docstore.ErrLocked):
		log.Warn("live documents are off: their log is held by another dmar process on this state folder", "err", err)
		return nil, func() {}, nil
	case err != nil:
		return nil, nil, err
	}
	return st, func() { st.Close() }, nil
}

// apiKeys are the configured API keys as the server takes them.
func apiKeys(keys []config.APIKey) []server.APIKey {
	var out []server.APIKey
	for _, k := range keys {
		out = append(out, server.APIKey{Name: k.Name, SHA256: k.SHA256, Rate: k.Rate, Burst: k.Burst, Write: k.Write})
	}
	return out
}
