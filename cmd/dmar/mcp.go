package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/mcp"
	"github.com/dmar-kg/dmar/internal/server"
)

func init() {
	register("mcp", "serve dmar's tools to an agent over the Model Context Protocol on stdin/stdout (serve's data and backend settings; DMAR_API_KEY is the caller's key)", runMCP)
}

// runMCP serves one MCP client over stdio: the REST API built as dmar serve
// builds it, called in process, with DMAR_API_KEY as the caller's key when
// API keys are configured. Logs go to stderr; stdout is the protocol's.
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a := appFlags{serve: true}
	fs := a.flags("mcp", stderr)
	if err := a.parse(fs, args); err != nil {
		return err
	}
	a.cfg.Quiet = true // progress lines would not reach the agent; logs do
	sc := a.cfg.Server
	log := newLogger(stderr, sc.LogLevel)
	metrics := server.NewMetrics()
	p, set, err := a.pipelineFor(ctx, stderr, log, metrics)
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
	keys := apiKeys(sc.Auth.Keys)
	ans := backends.Answerer(a.cfg.Chat)
	h := server.New(server.Config{Pipeline: p, Metrics: metrics, Logger: log, RequestTimeout: sc.RequestTimeout,
		APIKeys: keys, MaxResponseBytes: sc.MaxResponseBytes, Answerer: ans, AnswerModel: a.cfg.Chat.Model, Documents: docs})
	svc, err := mcp.New(mcpConfig(h, ans != nil, docs != nil, config.ClientAPIKey(os.Getenv), log))
	if err != nil {
		return err
	}
	return svc.RunStdio(ctx)
}

// mcpConfig is the MCP tools' configuration over the REST handler h.
func mcpConfig(h http.Handler, answer, documents bool, key string, log *slog.Logger) mcp.Config {
	c := mcp.Config{API: h, Spec: server.OpenAPI(), Answer: answer, Documents: documents, Key: key, Version: version, Logger: log}
	if s, ok := h.(*server.Server); ok {
		c.CanWrite = s.CanWrite
	}
	return c
}

// mcpHandler is dmar serve's POST /mcp: the tools over the server's own
// REST handler, each caller presenting its own key.
func mcpHandler(answer, documents bool, log *slog.Logger) func(http.Handler) http.Handler {
	return func(api http.Handler) http.Handler {
		svc, err := mcp.New(mcpConfig(api, answer, documents, "", log))
		if err != nil {
			log.Error("the MCP endpoint is off", "err", err)
			return nil
		}
		return svc.Handler()
	}
}

// liveDocuments opens set's document store for dmar serve and dmar mcp.
// When another process holds its log, documents are off (nil, and a
// warning): searches still work, the document routes answer 503 and the
// document tools are not offered.
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
