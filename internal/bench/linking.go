package bench

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"text/tabwriter"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Linking times Link on the embedded graph and on another backend for the
// same texts (dmar bench subgraphs --questions): every text once untimed
// (plans compiled, caches filled), then Rounds timed passes, the two graphs
// in alternating order. The mentions are compared too.
type Linking struct {
	Embedded  kg.Graph
	Given     kg.Graph
	GivenName string
	Texts     []string
	Rounds    int
}

// Run writes a table of per-text p50/p95 to stdout and a last line
// link_p50_ratio=R (given over embedded).
func (b Linking) Run(ctx context.Context, stdout io.Writer) error {
	switch {
	case b.Embedded == nil || b.Given == nil:
		return fmt.Errorf("bench linking: two graphs are needed")
	case len(b.Texts) == 0:
		return fmt.Errorf("bench linking: no texts to link")
	case b.Rounds < 1:
		return fmt.Errorf("bench linking: %d rounds: want at least 1", b.Rounds)
	}
	type series struct {
		name     string
		g        kg.Graph
		ms       []float64
		mentions int
	}
	emb := &series{name: "embedded (memkg)", g: b.Embedded}
	giv := &series{name: b.GivenName, g: b.Given}
	differ, linked := 0, 0
	for r := 0; r <= b.Rounds; r++ {
		for i, text := range b.Texts {
			order := []*series{emb, giv}
			if (r+i)%2 == 1 {
				order = []*series{giv, emb}
			}
			var got [2][]kg.Mention
			for _, s := range order {
				t := time.Now()
				ms2, err := s.g.Link(ctx, text)
				if err != nil {
					return fmt.Errorf("bench linking: %s, text %d: %w", s.name, i+1, err)
				}
				d := ms(time.Since(t))
				if s == emb {
					got[0] = ms2
				} else {
					got[1] = ms2
				}
				if r > 0 {
					s.ms = append(s.ms, d)
					s.mentions += len(ms2)
				}
			}
			if r == 0 {
				if !reflect.DeepEqual(got[0], got[1]) {
					differ++
				}
				if len(got[0]) > 0 {
					linked++
				}
			}
		}
	}
	fmt.Fprintf(stdout, "Link of %d texts (%d with a mention on the embedded graph), %d timed passes after one warm-up\n\n", len(b.Texts), linked, b.Rounds)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "graph\tp50 ms\tp95 ms\tmentions per pass")
	for _, s := range []*series{emb, giv} {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%d\n", s.name, pct(s.ms, 50), pct(s.ms, 95), s.mentions/b.Rounds)
	}
	tw.Flush()
	if differ > 0 {
		fmt.Fprintf(stdout, "\nDIFFERENT links: %d of %d texts; the backends disagree\n", differ, len(b.Texts))
	} else {
		fmt.Fprintf(stdout, "\nidentical links: %d of %d texts\n", len(b.Texts), len(b.Texts))
	}
	fmt.Fprintf(stdout, "link_p50_ratio=%.2f\n\n", pct(giv.ms, 50)/pct(emb.ms, 50))
	return nil
}
