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
		{Size: 1000000, Backend: "weaviate http://x", DefaultP50: 100, PeakRSS: 2 << 30},
	}
	if got, want := Summary(rows), "scale_ratio=2.50 recall_at_100=0.9612 peak_rss_gb=2.00"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
	if got, want := Summary(rows[:1]), "scale_ratio=1.00 recall_at_100=1.0000 peak_rss_gb=1.00"; got != want {
		t.Errorf("one row: Summary = %q, want %q", got, want)
	}
}
