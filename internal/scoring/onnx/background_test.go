package onnx_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
)

// The background encoder gives the encoder's vectors (as the corpus path
// does, within 1e-5) in input order, under its version and identity, so
// that stored vectors and cache keys cannot tell them apart.
func TestBackgroundMatchesEncoder(t *testing.T) {
	e := testEncoder(t, onnx.WithBatchSize(8)).Truncated(128).Passage()
	b, err := e.Background(3, false)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	docs := codexmExtracts(t, 40)
	docs = append(docs, "short", "  a text with outer space \n", "")
	var sb strings.Builder
	m := progress.New(&sb, "embed", "docs", len(docs))
	got, err := b.EncodeCorpus(context.Background(), docs, m)
	if err != nil {
		t.Fatal(err)
	}
	if d := vecDiff(t, got, chunked(t, e, docs)); d > 1e-5 {
		t.Errorf("largest |difference| from the encoder's %.2g, want <= 1e-5", d)
	}
	if line := m.Line(); !strings.Contains(line, "43/43 docs") {
		t.Errorf("progress %q: want every document counted", line)
	}
	one, err := b.Encode(context.Background(), docs[:1])
	if err != nil {
		t.Fatal(err)
	}
	if d := vecDiff(t, one, got[:1]); d > 1e-5 {
		t.Errorf("one text: largest |difference| %.2g, want <= 1e-5", d)
	}
	if b.Version() != e.Version() || b.Identity() != e.Identity() || b.Dim() != e.Dim() {
		t.Errorf("background %q %q %d, encoder %q %q %d: want the same", b.Version(), b.Identity(), b.Dim(), e.Version(), e.Identity(), e.Dim())
	}
}

// lowThreads counts the process's threads with nice value 19 and
// scheduling policy policy ("0" SCHED_OTHER, "5" SCHED_IDLE).
func lowThreads(t *testing.T, policy string) int {
	t.Helper()
	stats, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil || len(stats) == 0 {
		t.Skipf("no /proc/self/task: %v", err)
	}
	c := 0
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // the thread ended meanwhile
		}
		// Fields after the command's closing parenthesis: state is the
		// 3rd field of stat, nice the 19th, policy the 41st.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 38 && f[16] == "19" && f[38] == policy {
			c++
		}
	}
	return c
}

// On Linux each worker runs on a thread of its own at nice 19 (and
// SCHED_IDLE when asked), and no other thread does: Close ends those
// threads instead of handing them back to the Go runtime.
func TestBackgroundLowersOnlyItsThreads(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("per-thread priority is only set on Linux")
	}
	e := testEncoder(t)
	for _, tc := range []struct {
		idle   bool
		policy string
	}{{false, "0"}, {true, "5"}} {
		before := lowThreads(t, tc.policy)
		b, err := e.Background(2, tc.idle)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := b.Lowered(); n != 2 || err != nil {
			t.Fatalf("idle %v: Lowered() = %d, %v; want 2 workers, no error", tc.idle, n, err)
		}
		if _, err := b.Encode(context.Background(), []string{"a", "b", "c"}); err != nil {
			t.Fatal(err)
		}
		if got := lowThreads(t, tc.policy) - before; got != 2 {
			t.Errorf("idle %v: %d threads at nice 19, policy %s beside those before, want the 2 workers'", tc.idle, got, tc.policy)
		}
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		// The runtime ends a locked thread when its goroutine has returned.
		deadline := time.Now().Add(5 * time.Second)
		for lowThreads(t, tc.policy) != before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := lowThreads(t, tc.policy) - before; got != 0 {
			t.Errorf("idle %v: %d threads still lowered after Close, want none", tc.idle, got)
		}
		if _, err := b.Encode(context.Background(), []string{"a"}); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("Encode after Close: %v, want an error saying it is closed", err)
		}
	}
}

func TestBackgroundEmptyAndCancelled(t *testing.T) {
	b, err := testEncoder(t).Background(2, true)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err := b.Encode(context.Background(), nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("no texts: %d vectors, %v; want none and no error", len(got), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Encode(ctx, codexmExtracts(t, 16)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: error %v, want context.Canceled", err)
	}
}
