// Package httpserve runs dmar's HTTP server: a listener with time limits,
// an optional loopback pprof listener, and the graceful drain on shutdown.
package httpserve

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// Drainer is the API handler (server.Server satisfies it).
type Drainer interface {
	http.Handler
	Drain()
	InFlight() int64
	WaitIdle(ctx context.Context) error
}

// Config is one server.
type Config struct {
	Addr            string
	Handler         Drainer
	RequestTimeout  time.Duration // the write timeout is 10s past it
	ShutdownTimeout time.Duration // drain bound
	PprofAddr       string        // loopback address of pprof; empty: off
	Log             *slog.Logger
	Started         func(addr net.Addr) // once listening
}

// Run listens on c.Addr and serves until ctx ends, then drains.
func Run(ctx context.Context, c Config) error {
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	srv := &http.Server{Handler: c.Handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: c.RequestTimeout + 10*time.Second,
		ErrorLog: slog.NewLogLogger(c.Log.Handler(), slog.LevelWarn)}
	if c.PprofAddr != "" {
		stop, err := servePprof(c.PprofAddr, c.Log)
		if err != nil {
			_ = ln.Close()
			return err
		}
		defer stop()
	}
	if c.Started != nil {
		c.Started(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	return drain(c.Handler, srv, c.ShutdownTimeout, c.Log)
}

// drain is the graceful shutdown on SIGTERM or SIGINT: new requests get 503
// with Retry-After while the admitted ones finish, for at most limit; then
// the listener closes. Requests still running at the limit are cut off.
func drain(h Drainer, srv *http.Server, limit time.Duration, log *slog.Logger) error {
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
