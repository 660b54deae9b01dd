package onnx

import (
	"runtime"
	"testing"
)

// A query session's pool: the configured threads, or at 0 half the CPUs
// (at least one) on the CPU and ORT's choice (0) on CUDA.
func TestSessionThreads(t *testing.T) {
	half := max(1, runtime.GOMAXPROCS(0)/2)
	for _, c := range []struct {
		cfg  Config
		want int
	}{
		{Config{Device: CPU}, half},
		{Config{Device: CPU, IntraOpThreads: 3}, 3},
		{Config{Device: CUDA}, 0},
		{Config{Device: CUDA, IntraOpThreads: 2}, 2},
	} {
		if got := c.cfg.sessionThreads(); got != c.want {
			t.Errorf("%+v: %d threads, want %d", c.cfg, got, c.want)
		}
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	if got := (Config{Device: CPU}).sessionThreads(); got != 1 {
		t.Errorf("one CPU: %d threads, want 1", got)
	}
}
