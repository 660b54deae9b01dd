package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"time"

	"github.com/dmar-kg/dmar/internal/answer"
	"github.com/dmar-kg/dmar/internal/chat"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/httpserve"
	"github.com/dmar-kg/dmar/internal/pipeline"

	"github.com/dmar-kg/dmar/internal/server"
)

func init() {
	register("serve", "serve DMAR retrieval over REST (embedded graph and index over the demo data by default)", runServe)
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a := appFlags{serve: true}
	fs := a.flags("serve", stderr)
	if err := a.parse(fs, args); err != nil {
		return err
	}
	sc := a.cfg.Server
	log := newLogger(stderr, sc.LogLevel)
	metrics := server.NewMetrics()
	p, m, checks, err := a.pipelineFor(ctx, stderr, log, metrics)
	if err != nil {
		return err
	}
	var docs server.DocumentStore
	switch st, err := a.openDocuments(ctx, m, log); {
	case errors.Is(err, docstore.ErrLocked):
		// Searches still work; the document routes answer 503.
		log.Warn("live documents are off: their log is held by another dmar serve on this state folder", "err", err)
	case err != nil:
		m.Close()
		return err
	default:
		defer st.Close()
		docs = st
	}
	warmCache(ctx, p, log)
	var ready []server.Checker
	for _, c := range checks {
		ready = append(ready, server.Checker{Name: c.name, Ping: c.ping})
	}
	var keys []server.APIKey
	for _, k := range sc.Auth.Keys {
		keys = append(keys, server.APIKey{Name: k.Name, SHA256: k.SHA256, Rate: k.Rate, Burst: k.Burst, Write: k.Write})
	}
	h := server.New(server.Config{Pipeline: p, Metrics: metrics, Logger: log, Ready: ready, RequestTimeout: sc.RequestTimeout,
		APIKeys: keys, CORSOrigins: sc.CORSOrigins, AllowedHosts: sc.AllowedHosts, MaxResponseBytes: sc.MaxResponseBytes,
		Answerer: a.answerer(), AnswerModel: a.cfg.Chat.Model, Documents: docs})
	// The models are freed by the server once every handler has returned
	// (never under a running request), not by a defer here.
	c := httpserve.Config{Addr: sc.Addr, Handler: h, RequestTimeout: sc.RequestTimeout, ShutdownTimeout: sc.ShutdownTimeout, Log: log, Release: m.Close}
	if sc.Pprof {
		c.PprofAddr = sc.PprofAddr
		// Contention and blocking are what a load test needs to see.
		runtime.SetMutexProfileFraction(10)
		runtime.SetBlockProfileRate(int(time.Millisecond))
	}
	c.Started = func(addr net.Addr) {
		log.Info("dmar serving", "addr", "http://"+addr.String(), "graph", a.cfg.Graph, "index", a.cfg.Index, "data", a.cfg.Data,
			"api_keys", len(keys), "cors_origins", sc.CORSOrigins, "request_timeout", sc.RequestTimeout.String(),
			"backend_timeout", sc.BackendTimeout.String(), "pprof", sc.Pprof)
		fmt.Fprintf(stdout, "dmar: serving on http://%s\n", addr)
	}
	return httpserve.Run(ctx, c)
}

// answerer is POST /v1/answer's generator: the chat endpoint that also
// serves reformulator=chat; nil without one (the route answers 503). The
// request's time limit bounds each answer.
func (a *appFlags) answerer() *answer.Answerer {
	c := a.cfg.Chat
	if c.BaseURL == "" {
		return nil
	}
	return answer.New(answer.Config{Generator: chat.Client{BaseURL: c.BaseURL, Model: c.Model, APIKey: c.APIKey.Reveal(), MaxTokens: answer.DefaultMaxTokens}})
}

func flagErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{err.Error()}
}

// warmCache extracts and encodes every entity's subgraph of an embedded
// graph before the server listens, so that first requests run at steady
// state (about 5-9 s for CoDEx-M's 17,050 entities on 2 cores). Graphs
// larger than the cache, and Neo4j, warm up with traffic instead.
func warmCache(ctx context.Context, p *pipeline.Pipeline, log *slog.Logger) {
	roots := entityRoots(p.Graph())
	if roots == nil {
		return
	}
	start := time.Now()
	n, err := p.Warm(ctx, roots(), p.Defaults())
	if err != nil {
		log.Warn("cache warm-up failed; requests warm it instead", "err", err)
		return
	}
	log.Info("cache warmed", "subgraphs", n, "took", time.Since(start).Round(time.Millisecond).String())
}
