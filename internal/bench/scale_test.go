package bench

import "testing"

// The last line names the worst backend's ratio, the embedded index's
// recall at the largest size (not a smaller size's) and the highest peak
// RSS at that size.
func TestSummary(t *testing.T) {
	rows := []ScaleRow{
		{Size: 16000, Backend: "embedded", DefaultP50: 20, RecallAt100: 1, PeakRSS: 1 << 30},
		{Size: 16000, Backend: "weaviate http://x", DefaultP50: 40, PeakRSS: 5 << 30},
		{Size: 1000000, Backend: "embedded", DefaultP50: 30, RecallAt100: 0.9612, PeakRSS: 3 << 29},
		{Size: 1000000, Backend: "weaviate http://x", DefaultP50: 100, RecallAt100: 0.9069, PeakRSS: 2 << 30},
	}
	if got, want := Summary(rows), "scale_ratio=2.50 recall_at_100=0.9612 peak_rss_gb=2.00"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if got, want := Summary(rows[:1]), "scale_ratio=1.00 recall_at_100=1.0000 peak_rss_gb=1.00"; got != want {
		t.Errorf("one row: Summary = %q, want %q", got, want)
	}
	// Without the embedded index (--no-embedded), the remote index's recall.
	if got, want := Summary([]ScaleRow{rows[1], rows[3]}), "scale_ratio=2.50 recall_at_100=0.9069 peak_rss_gb=2.00"; got != want {
		t.Errorf("remote rows only: Summary = %q, want %q", got, want)
	}
}

// The runtime's cost of the timed requests is counted between two readings,
// per request, and a run that allocates counts its bytes.
func TestGCCost(t *testing.T) {
	c := gcSample{alloc: 10 << 20, cycles: 7, gcCPU: 0.5}.since(gcSample{alloc: 2 << 20, cycles: 3, gcCPU: 0.1}, 4)
	if c.allocMB != 2 || c.cycles != 4 || c.gcCPUms < 99.99 || c.gcCPUms > 100.01 {
		t.Errorf("since = %+v, want 2 MB, 4 cycles, 100 ms a request", c)
	}
	if (gcSample{}).since(gcSample{}, 0) != (gcCost{}) {
		t.Error("no requests: want no cost")
	}
	before := readGC()
	keep := make([][]byte, 0, 64)
	for i := 0; i < 64; i++ {
		keep = append(keep, make([]byte, 1<<20))
	}
	if got := readGC().since(before, 1); got.allocMB < 64 {
		t.Errorf("64 MB allocated, counted %.1f MB (kept %d)", got.allocMB, len(keep))
	}
}
