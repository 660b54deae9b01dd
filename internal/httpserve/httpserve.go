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
	// Release frees what the handlers use (the ONNX sessions) once the
	// server has shut down. It runs only when every handler has returned:
	// freeing a model while a handler is inside it crashes the process, so
	// if a handler outlives the drain, Release is skipped (the process is
	// exiting anyway) and a warning says so.
	Release func()
}

// grace is the part of the drain limit kept for requests cut off at its end
// to answer 503 (their contexts are cancelled) before connections close.
func grace(limit time.Duration) time.Duration { return min(limit/4, 500*time.Millisecond) }

// Run listens on c.Addr and serves until ctx ends, then drains.
func Run(ctx context.Context, c Config) error {
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	// Every request's context derives from reqCtx, so that the drain can cut
	// off the requests still running at its limit: they then answer 503.
	reqCtx, cutOff := context.WithCancel(context.Background())
	defer cutOff()
	srv := &http.Server{Handler: c.Handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: c.RequestTimeout + 10*time.Second,
		ErrorLog: slog.NewLogLogger(c.Log.Handler(), slog.LevelWarn), BaseContext: func(net.Listener) context.Context { return reqCtx }}
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
	idle := drain(c.Handler, srv, cutOff, c.ShutdownTimeout, c.Log)
	if c.Release != nil {
		if idle {
			c.Release()
		} else {
			c.Log.Warn("handlers still running after the drain: their models are left open until the process exits", "in_flight", c.Handler.InFlight())
		}
	}
	return nil
}

// drain is the graceful shutdown on SIGTERM or SIGINT: new requests get 503
// with Retry-After while the admitted ones finish, for at most limit. Near
// the limit (grace before it) the requests still running are cut off: their
// contexts are cancelled, so each answers 503 instead of losing its
// connection; at the limit the listener and connections close. It reports
// whether every handler has returned.
func drain(h Drainer, srv *http.Server, cutOff context.CancelFunc, limit time.Duration, log *slog.Logger) (idle bool) {
	start := time.Now()
	end := start.Add(limit)
	h.Drain()
	log.Info("draining: new requests get 503", "in_flight", h.InFlight(), "limit", limit.String())
	wctx, cancel := context.WithDeadline(context.Background(), end.Add(-grace(limit)))
	defer cancel()
	cut := h.WaitIdle(wctx) != nil
	if cut {
		log.Warn("drain limit reached: cutting off requests still running (they answer 503)", "in_flight", h.InFlight())
		cutOff()
	}
	sctx, cancel2 := context.WithDeadline(context.Background(), end)
	defer cancel2()
	_ = h.WaitIdle(sctx)
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	// A handler cut off inside a model call returns when the call does (a
	// few milliseconds for one batch); wait briefly so the models can be
	// freed safely.
	fctx, cancel3 := context.WithTimeout(context.Background(), grace(limit))
	defer cancel3()
	idle = h.WaitIdle(fctx) == nil
	if cut {
		log.Warn("shutdown cut off requests still running", "in_flight", h.InFlight(), "after", time.Since(start).String())
	} else {
		log.Info("shut down", "after", time.Since(start).String())
	}
	return idle
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
