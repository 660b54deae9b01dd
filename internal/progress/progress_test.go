package progress

import (
	"strings"
	"testing"
	"time"
)

func TestLine(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	m := New(nil, "load corpus", "docs", 100)
	m.start, m.last, m.now = start, start, func() time.Time { return now }
	now = start.Add(10 * time.Second)
	m.Add(25)
	if got, want := m.Line(), "load corpus: 25/100 docs (25.0%), 2.5 docs/s, ETA 30s"; got != want {
		t.Errorf("Line() = %q, want %q", got, want)
	}
	u := New(nil, "eval", "questions", 0)
	u.start, u.now = start, func() time.Time { return now }
	u.Add(400)
	if got := u.Line(); !strings.Contains(got, "400 questions, 40 questions/s") {
		t.Errorf("unknown total: %q", got)
	}
}
