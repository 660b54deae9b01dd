// Package progress reports the progress of long jobs (loads, encodes,
// evaluations): count, rate and ETA, at most once per interval.
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Meter counts units of work and prints a line like
// "load corpus: 4096/16352 docs (25.0%), 812 docs/s, ETA 15s".
type Meter struct {
	mu       sync.Mutex
	w        io.Writer
	name     string
	unit     string
	total    int // 0 when unknown
	done     int
	start    time.Time
	last     time.Time
	interval time.Duration
	now      func() time.Time
}

// New returns a meter writing to w (nil: silent).
func New(w io.Writer, name, unit string, total int) *Meter {
	now := time.Now()
	return &Meter{w: w, name: name, unit: unit, total: total, start: now, last: now, interval: time.Second, now: time.Now}
}

// Add records n more units and prints if the interval has passed.
func (m *Meter) Add(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done += n
	if t := m.now(); t.Sub(m.last) >= m.interval {
		m.last = t
		m.print(t)
	}
}

// Done prints the final line.
func (m *Meter) Done() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.print(m.now())
}

// Line formats the current state.
func (m *Meter) Line() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.line(m.now())
}

func (m *Meter) print(t time.Time) {
	if m.w != nil {
		fmt.Fprintln(m.w, m.line(t))
	}
}

func (m *Meter) line(t time.Time) string {
	el := t.Sub(m.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(m.done) / el
	}
	if m.total <= 0 {
		return fmt.Sprintf("%s: %d %s, %s %s/s, %s elapsed", m.name, m.done, m.unit, fmtRate(rate), m.unit, round(t.Sub(m.start)))
	}
	pct := 100 * float64(m.done) / float64(m.total)
	eta := "?"
	if rate > 0 {
		eta = round(time.Duration(float64(m.total-m.done) / rate * float64(time.Second))).String()
	}
	return fmt.Sprintf("%s: %d/%d %s (%.1f%%), %s %s/s, ETA %s", m.name, m.done, m.total, m.unit, pct, fmtRate(rate), m.unit, eta)
}

func round(d time.Duration) time.Duration {
	if d > time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// fmtRate keeps a decimal for slow jobs (0.4 questions/s, not 0).
func fmtRate(r float64) string {
	if r < 10 {
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.0f", r)
}
