package bench

import (
	"fmt"
	"runtime/metrics"
)

// gcCost is what a run of requests cost the Go runtime: the bytes they
// allocated and the collector's cycles and CPU time while they ran. A
// large index near its memory limit collects often, and the collector's
// CPU is taken from the requests (the encoder's threads included), which
// the stage timings alone do not show.
type gcCost struct {
	requests int
	allocMB  float64 // per request
	cycles   uint64
	gcCPUms  float64 // per request, the collector's CPU over all threads
}

// gcSample is a reading of the runtime's cumulative counters.
type gcSample struct {
	alloc, cycles uint64
	gcCPU         float64 // seconds
}

var gcMetrics = []string{"/gc/heap/allocs:bytes", "/gc/cycles/total:gc-cycles", "/cpu/classes/gc/total:cpu-seconds"}

func readGC() gcSample {
	s := make([]metrics.Sample, len(gcMetrics))
	for i, n := range gcMetrics {
		s[i].Name = n
	}
	metrics.Read(s)
	var g gcSample
	if s[0].Value.Kind() == metrics.KindUint64 {
		g.alloc = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		g.cycles = s[1].Value.Uint64()
	}
	if s[2].Value.Kind() == metrics.KindFloat64 {
		g.gcCPU = s[2].Value.Float64()
	}
	return g
}

// since is the cost of n requests run between before and g.
func (g gcSample) since(before gcSample, n int) gcCost {
	if n == 0 {
		return gcCost{}
	}
	return gcCost{
		requests: n,
		allocMB:  float64(g.alloc-before.alloc) / float64(n) / (1 << 20),
		cycles:   g.cycles - before.cycles,
		gcCPUms:  (g.gcCPU - before.gcCPU) * 1000 / float64(n),
	}
}

func (c gcCost) String() string {
	return fmt.Sprintf("Go runtime over the %d timed requests: %.1f MB allocated a request, %d collections, collector CPU %.1f ms a request",
		c.requests, c.allocMB, c.cycles, c.gcCPUms)
}
