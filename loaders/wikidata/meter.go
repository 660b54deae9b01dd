package wikidata

import (
	"fmt"
	"io"
	"time"
)

// meter prints dump progress: uncompressed MB and MB/s, entities and
// entities/s, and the ETA from how much of the (compressed) file was read.
type meter struct {
	w        io.Writer
	name     string
	size     int64
	every    time.Duration
	start    time.Time
	last     time.Time
	entities int
}

func newMeter(w io.Writer, name string, size int64, every time.Duration) *meter {
	if every <= 0 {
		every = 2 * time.Second
	}
	now := time.Now()
	return &meter{w: w, name: name, size: size, every: every, start: now, last: now}
}

func (m *meter) update(bytes, consumed int64, entities int) {
	m.entities += entities
	if m.w == nil {
		return
	}
	if t := time.Now(); t.Sub(m.last) >= m.every {
		m.last = t
		fmt.Fprintln(m.w, m.line(t, bytes, consumed))
	}
}

func (m *meter) done(bytes, consumed int64) {
	if m.w != nil {
		fmt.Fprintln(m.w, m.line(time.Now(), bytes, consumed)+" (done)")
	}
}

func (m *meter) line(t time.Time, bytes, consumed int64) string {
	el := t.Sub(m.start).Seconds()
	if el <= 0 {
		el = 1e-9
	}
	mb := float64(bytes) / 1e6
	s := fmt.Sprintf("%s: %.1f MB, %.1f MB/s, %d entities, %.0f entities/s", m.name, mb, mb/el, m.entities, float64(m.entities)/el)
	if m.size > 0 && consumed > 0 {
		frac := float64(consumed) / float64(m.size)
		if frac > 1 {
			frac = 1
		}
		eta := time.Duration(el * (1 - frac) / frac * float64(time.Second))
		s += fmt.Sprintf(", %.1f%% of file, ETA %s", 100*frac, eta.Round(time.Second))
	}
	return s
}
