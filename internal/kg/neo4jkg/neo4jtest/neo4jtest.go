// Package neo4jtest serialises the test processes that share one Neo4j
// server. `go test ./...` runs packages in parallel processes; two of them
// loading or replacing the graph at once deadlock in Neo4j or read each
// other's half-loaded graph, so each test process that uses the server takes
// an exclusive file lock on first use and holds it until it exits.
package neo4jtest

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	once    sync.Once
	lockErr error
	// held keeps the locked file reachable: an unreachable *os.File is
	// closed by its finalizer, and closing it drops the lock.
	held *os.File //nolint:unused // written, never read: it keeps the file reachable
)

// Exclusive blocks until this process holds the shared Neo4j server
// (uri names it) for itself; it fails the test if the lock cannot be taken.
func Exclusive(tb testing.TB, uri string) {
	tb.Helper()
	once.Do(func() {
		name := filepath.Join(os.TempDir(), "dmar-neo4j-tests-"+sanitize(uri)+".lock")
		f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			lockErr = err
			return
		}
		start := time.Now()
		// Held until the process exits (the descriptor is never closed).
		held = f
		if lockErr = syscall.Flock(int(f.Fd()), syscall.LOCK_EX); lockErr == nil {
			if d := time.Since(start); d > time.Second {
				tb.Logf("waited %s for the other test processes using Neo4j at %s", d.Round(time.Second), uri)
			}
		}
	})
	if lockErr != nil {
		tb.Fatalf("lock the shared Neo4j server %s: %v", uri, lockErr)
	}
}

func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}
