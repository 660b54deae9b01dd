package neo4jkg_test

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
)

// proxy forwards loopback TCP connections to target until stopped.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			// A proxy copies until either side closes; how it ended says nothing.
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() { _, _ = io.Copy(c, u); c.Close() }()
		}
	}()
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) stop() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// TestOutageIsUnavailable: Neo4j going away under an open Store turns every
// call into an errs.Unavailable error (503 + Retry-After), not a hang.
func TestOutageIsUnavailable(t *testing.T) {
	cfg := envConfig()
	open(t) // skips or fails as the other integration tests do
	host := strings.TrimPrefix(strings.TrimPrefix(cfg.URI, "bolt://"), "neo4j://")
	p := startProxy(t, host)
	cfg.URI = "bolt://" + p.ln.Addr().String()
	cfg.RetryTime = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := neo4jkg.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("ping through the proxy: %v", err)
	}
	p.stop()
	calls := map[string]func() error{
		"Ping":      func() error { return s.Ping(ctx) },
		"Subgraphs": func() error { _, err := s.Subgraphs(ctx, []string{"Q25188"}, kg.DefaultSubgraphParams()); return err },
		"Link":      func() error { _, err := s.Link(ctx, "Christopher Nolan"); return err },
		"Entities":  func() error { _, err := s.Entities(ctx, []string{"Q25188"}); return err },
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		if errs.CodeOf(err) != errs.Unavailable {
			t.Errorf("%s after the outage: %v (code %s), want %s", name, err, errs.CodeOf(err), errs.Unavailable)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s took %v to fail", name, d)
		}
	}
}
