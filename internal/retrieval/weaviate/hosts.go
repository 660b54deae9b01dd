package weaviate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// splitHostList parts an index URL into its host part (one HOST:PORT or a
// comma-separated list) and the URL with the first host only.
func splitHostList(raw string) (hostPart, oneHost string) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return "", raw
	}
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	hostPart = rest[:end]
	first, _, _ := strings.Cut(hostPart, ",")
	return hostPart, raw[:i+3] + first + rest[end:]
}

// parseHosts reads the host part of an index URL: one HOST[:PORT] or
// several separated by commas (the nodes of a cluster), each with port
// defaultPort when it names none.
func parseHosts(raw, hostPart, defaultPort string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, h := range strings.Split(hostPart, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, fmt.Errorf("weaviate url %q: an empty host in the host list", raw)
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			host, port = strings.Trim(h, "[]"), defaultPort
		}
		if host == "" {
			return nil, fmt.Errorf("weaviate url %q: host %q has no name", raw, h)
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return nil, fmt.Errorf("weaviate url %q: host %q has no valid port", raw, h)
		}
		hp := net.JoinHostPort(host, port)
		if seen[hp] {
			return nil, fmt.Errorf("weaviate url %q: host %s is listed twice", raw, hp)
		}
		seen[hp] = true
		out = append(out, hp)
	}
	return out, nil
}

// parseGRPC reads the grpc parameter against the hosts (host:port each): off,
// one port or host:port for every host, or a comma-separated list with one
// per host. Empty: port 50051 on every host.
func parseGRPC(raw, g string, hosts []string) ([]string, error) {
	if g == "off" {
		return nil, nil
	}
	parts := []string{"50051"}
	if g != "" {
		parts = strings.Split(g, ",")
	}
	if len(parts) != 1 && len(parts) != len(hosts) {
		return nil, fmt.Errorf("weaviate url %q: grpc=%q names %d endpoints for %d hosts (give one port for all, or one per host)", raw, g, len(parts), len(hosts))
	}
	out := make([]string, len(hosts))
	for i, h := range hosts {
		p := strings.TrimSpace(parts[min(i, len(parts)-1)])
		if strings.Contains(p, ":") {
			if _, _, err := net.SplitHostPort(p); err != nil {
				return nil, fmt.Errorf("weaviate url %q: grpc endpoint %q is not host:port", raw, p)
			}
			if len(parts) == 1 && len(hosts) > 1 {
				return nil, fmt.Errorf("weaviate url %q: grpc=%s names one host for %d hosts; give a port, or one host:port per host", raw, p, len(hosts))
			}
			out[i] = p
			continue
		}
		if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
			return nil, fmt.Errorf("weaviate url %q: grpc=%q is neither a port nor host:port", raw, p)
		}
		host, _, _ := net.SplitHostPort(h)
		out[i] = net.JoinHostPort(host, p)
	}
	return out, nil
}

// hostPool sends each REST and GraphQL request to one of a cluster's nodes:
// in turn among those believed up, so that the nodes share the load, and,
// when a node cannot be reached, to the next one. A node that failed is left
// out until a background probe finds it ready again, so that requests do not
// wait on a dead node's connection attempts. Every request dmar sends is
// idempotent (searches, reads, and writes of objects with fixed ids), so a
// request whose connection broke is sent again to another node.
type hostPool struct {
	scheme string
	hosts  []string // host:port
	base   http.RoundTripper
	probe  time.Duration // a down node's first probe after this, doubling to maxProbe

	mu      sync.Mutex
	next    int
	down    []time.Time // when each node may be probed again; zero: up
	wait    []time.Duration
	probing []bool
}

const maxProbe = 5 * time.Second

func newHostPool(scheme string, hosts []string, base http.RoundTripper) *hostPool {
	if base == nil {
		base = transport()
	}
	return &hostPool{scheme: scheme, hosts: hosts, base: base, probe: 250 * time.Millisecond,
		down: make([]time.Time, len(hosts)), wait: make([]time.Duration, len(hosts)), probing: make([]bool, len(hosts))}
}

// order is the nodes to try for one request: the live ones from the next in
// turn, then the down ones (tried last, so a request still has a chance when
// every node was marked down).
func (p *hostPool) order() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.hosts)
	start := p.next
	p.next = (p.next + 1) % n
	up := make([]int, 0, n)
	var down []int
	now := time.Now()
	for k := 0; k < n; k++ {
		i := (start + k) % n
		if p.down[i].IsZero() {
			up = append(up, i)
			continue
		}
		down = append(down, i)
		if !p.probing[i] && now.After(p.down[i]) {
			p.probing[i] = true
			go p.check(i)
		}
	}
	return append(up, down...)
}

// markDown leaves node i out of the turn until a probe finds it ready.
func (p *hostPool) markDown(i int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down[i].IsZero() {
		p.wait[i] = p.probe
		p.down[i] = time.Now().Add(p.wait[i])
	}
}

// check probes node i's readiness once: ready puts it back in the turn,
// anything else probes again later (backing off to maxProbe).
func (p *hostPool) check(i int) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := p.ready(ctx, i)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.probing[i] = false
	if err == nil {
		p.down[i], p.wait[i] = time.Time{}, 0
		return
	}
	p.wait[i] = min(2*max(p.wait[i], p.probe), maxProbe)
	p.down[i] = time.Now().Add(p.wait[i])
}

func (p *hostPool) ready(ctx context.Context, i int) error {
	status, err := readiness(ctx, p.base.RoundTrip, p.scheme+"://"+p.hosts[i])
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("status %d", status)
	}
	return err
}

// RoundTrip implements http.RoundTripper: the request goes to the nodes in
// order() until one answers. An answer is any HTTP response, except 503
// (a node starting or shutting down), which is tried on the next node too
// and returned only when no node did better.
func (p *hostPool) RoundTrip(req *http.Request) (*http.Response, error) {
	var errs []error
	var unavailable *http.Response
	for _, i := range p.order() {
		if err := req.Context().Err(); err != nil {
			errs = append(errs, err)
			break
		}
		r, err := p.attempt(req, i)
		if err != nil {
			if req.Context().Err() != nil {
				errs = append(errs, err)
				break
			}
			p.markDown(i)
			errs = append(errs, fmt.Errorf("%s: %w", p.hosts[i], err))
			continue
		}
		if r.StatusCode == http.StatusServiceUnavailable {
			p.markDown(i)
			if unavailable != nil {
				unavailable.Body.Close()
			}
			unavailable = r
			continue
		}
		if unavailable != nil {
			unavailable.Body.Close()
		}
		return r, nil
	}
	if unavailable != nil {
		return unavailable, nil
	}
	return nil, fmt.Errorf("no weaviate node answered: %w", errors.Join(errs...))
}

// attempt sends req to node i, with a fresh copy of its body.
func (p *hostPool) attempt(req *http.Request, i int) (*http.Response, error) {
	r := req.Clone(req.Context())
	u := *req.URL
	u.Host = p.hosts[i]
	r.URL, r.Host = &u, ""
	if req.Body != nil && req.GetBody != nil {
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = b
	}
	return p.base.RoundTrip(r)
}

// transport is the connections under a hostPool: http.DefaultTransport's,
// with a shorter dial timeout, so that a node whose machine is gone (no
// refusal, only silence) costs a request seconds, not half a minute,
// before the next node is tried.
func transport() http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 3 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.MaxIdleConnsPerHost = 16
	return t
}

// hostURLs are the hosts as base URLs.
func hostURLs(scheme string, hosts []string) []string {
	out := make([]string, len(hosts))
	for i, h := range hosts {
		out[i] = (&url.URL{Scheme: scheme, Host: h}).String()
	}
	return out
}
