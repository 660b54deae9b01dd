package server

import (
	"sync"
	"time"
)

// Wrong-key back-off: see backoff.
const (
	// AuthFreeFailures wrong keys from one address are answered 401; the
	// last of them starts a block during which every request from that
	// address that needs a key is 429 with Retry-After.
	AuthFreeFailures = 5
	// AuthTrackedClients bounds the addresses the back-off remembers.
	AuthTrackedClients = 10_000

	authBlockBase = time.Second     // the first block; each further wrong key doubles it
	authBlockMax  = 5 * time.Minute // the longest block
	authForget    = 15 * time.Minute
)

// backoff counts wrong API keys per client address (the connection's peer,
// never X-Forwarded-For, which a client writes). From the AuthFreeFailures-th
// wrong key on, each one blocks the address for authBlockBase doubled per
// further wrong key, at most authBlockMax; a right key clears the count, and
// an address with no wrong key for authForget is forgotten. At most
// AuthTrackedClients addresses are held: when full, stale ones are dropped,
// then an arbitrary one.
type backoff struct {
	mu  sync.Mutex
	m   map[string]*failures
	now func() time.Time
}

type failures struct {
	n     int
	last  time.Time
	until time.Time
}

func newBackoff() *backoff { return &backoff{m: map[string]*failures{}, now: time.Now} }

// blocked is how long ip stays blocked (0: not blocked).
func (b *backoff) blocked(ip string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	f, ok := b.m[ip]
	if !ok {
		return 0
	}
	return max(0, f.until.Sub(b.now()))
}

// fail counts a wrong key from ip.
func (b *backoff) fail(ip string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	f, ok := b.m[ip]
	if !ok {
		if len(b.m) >= AuthTrackedClients {
			b.evict(now)
		}
		f = &failures{}
		b.m[ip] = f
	}
	f.n++
	f.last = now
	if over := f.n - AuthFreeFailures; over >= 0 {
		d := authBlockMax
		if over < 16 {
			d = min(authBlockMax, authBlockBase<<over)
		}
		f.until = now.Add(d)
	}
}

// ok clears ip's count after a right key.
func (b *backoff) ok(ip string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.m, ip)
}

// evict makes room for one address.
func (b *backoff) evict(now time.Time) {
	for ip, f := range b.m {
		if now.After(f.until) && now.Sub(f.last) > authForget {
			delete(b.m, ip)
		}
	}
	for ip := range b.m {
		if len(b.m) < AuthTrackedClients {
			return
		}
		delete(b.m, ip)
	}
}

func (b *backoff) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}
