package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/dmar-kg/dmar/internal/server"
)

func init() {
	register("serve", "serve DMAR retrieval over REST (embedded graph and index over the demo data by default)", runServe)
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	a.register(fs)
	addr := fs.String("addr", env("DMAR_ADDR", "127.0.0.1:8080"), "listen address; loopback unless told otherwise (env DMAR_ADDR)")
	timeout := fs.Duration("request-timeout", 30*time.Second, "time limit of one request")
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	metrics := server.NewMetrics()
	p, m, checks, err := a.pipelineFor(ctx, stderr, log, metrics)
	if err != nil {
		return err
	}
	defer m.Close()
	var ready []server.Checker
	for _, c := range checks {
		ready = append(ready, server.Checker{Name: c.name, Ping: c.ping})
	}
	h := server.New(server.Config{Pipeline: p, Metrics: metrics, Logger: log, Ready: ready, RequestTimeout: *timeout})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: *timeout + 10*time.Second}
	log.Info("dmar serving", "addr", "http://"+ln.Addr().String(), "graph", a.graph, "index", a.index, "data", a.data)
	fmt.Fprintf(stdout, "dmar: serving on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Graceful shutdown: stop accepting, let in-flight requests finish (bounded).
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

func flagErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{err.Error()}
}
