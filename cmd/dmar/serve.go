package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"runtime"
	"time"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/httpserve"

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
	p, set, err := a.pipelineFor(ctx, stderr, log, metrics)
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
		Answerer: backends.Answerer(a.cfg.Chat), AnswerModel: a.cfg.Chat.Model, Documents: docs, MCP: mcpHandler(a.cfg.Chat.BaseURL != "", docs != nil, log),
		Verifier: backends.Verifier(a.cfg.Chat)})
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
		log.Info("dmar serving", "addr", "http://"+addr.String(), "graph", a.cfg.Graph, "index", a.cfg.Index, "data", a.cfg.Data,
			"api_keys", len(keys), "cors_origins", sc.CORSOrigins, "request_timeout", sc.RequestTimeout.String(),
			"backend_timeout", sc.BackendTimeout.String(), "pprof", sc.Pprof)
		fmt.Fprintf(stdout, "dmar: serving on http://%s\n", addr)
	}
	return httpserve.Run(ctx, c)
}

func flagErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{err.Error()}
}
