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
	"net/http/pprof"
	"time"

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
	defer m.Close()
	warmCache(ctx, p, log)
	var ready []server.Checker
	for _, c := range checks {
		ready = append(ready, server.Checker{Name: c.name, Ping: c.ping})
	}
	var keys []server.APIKey
	for _, k := range sc.Auth.Keys {
		keys = append(keys, server.APIKey{Name: k.Name, SHA256: k.SHA256, Rate: k.Rate, Burst: k.Burst})
	}
	h := server.New(server.Config{Pipeline: p, Metrics: metrics, Logger: log, Ready: ready, RequestTimeout: sc.RequestTimeout,
		APIKeys: keys, CORSOrigins: sc.CORSOrigins})
	ln, err := net.Listen("tcp", sc.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: sc.RequestTimeout + 10*time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	if sc.Pprof {
		stop, err := servePprof(sc.PprofAddr, log)
		if err != nil {
			_ = ln.Close()
			return err
		}
		defer stop()
	}
	log.Info("dmar serving", "addr", "http://"+ln.Addr().String(), "graph", a.cfg.Graph, "index", a.cfg.Index, "data", a.cfg.Data,
		"api_keys", len(keys), "cors_origins", sc.CORSOrigins, "request_timeout", sc.RequestTimeout.String(),
		"backend_timeout", sc.BackendTimeout.String(), "pprof", sc.Pprof)
	fmt.Fprintf(stdout, "dmar: serving on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	return drain(h, srv, sc.ShutdownTimeout, log)
}

// drain is the graceful shutdown on SIGTERM or SIGINT: new requests get 503
// with Retry-After while the admitted ones finish, for at most limit; then
// the listener closes. Requests still running at the limit are cut off.
func drain(h *server.Server, srv *http.Server, limit time.Duration, log *slog.Logger) error {
	start := time.Now()
	h.Drain()
	log.Info("draining: new requests get 503", "in_flight", h.InFlight(), "limit", limit.String())
	wctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	waitErr := h.WaitIdle(wctx)
	sctx, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	err := srv.Shutdown(sctx)
	if waitErr != nil || err != nil {
		_ = srv.Close()
		log.Warn("shutdown cut off requests still running", "in_flight", h.InFlight(), "after", time.Since(start).String())
		return nil
	}
	log.Info("shut down", "after", time.Since(start).String())
	return nil
}

// servePprof serves net/http/pprof on its own loopback listener (the
// configuration refuses any other address), never on the API's port.
func servePprof(addr string, log *slog.Logger) (stop func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
		return nil, fmt.Errorf("pprof: %q is not a loopback address", addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	ps := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = ps.Serve(ln) }()
	log.Info("pprof serving", "addr", "http://"+ln.Addr().String()+"/debug/pprof/")
	return func() { _ = ps.Close() }, nil
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
