package bundlesink

import (
	"context"
	"os"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/kgtest"
)

// The bundle sink keeps the kg.Sink contract; what it wrote is read back
// by bundle.Read, as the embedded graph reads it.
func TestSinkConformance(t *testing.T) {
	kgtest.RunSink(t, func(t *testing.T) kgtest.SinkOutput {
		dir := t.TempDir()
		return kgtest.SinkOutput{
			Open: func(*testing.T) kg.Sink { return New(dir) },
			Read: func(t *testing.T, qids []string) kgtest.Written {
				w := kgtest.Written{Labels: map[string]string{}}
				if _, err := os.Stat(dir + "/entities.jsonl"); os.IsNotExist(err) {
					return w // nothing written: no bundle
				}
				b, err := bundle.Read(context.Background(), dir)
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]bool{}
				for _, q := range qids {
					want[q] = true
				}
				for _, e := range b.Entities {
					if want[e.QID] {
						w.Labels[e.QID] = e.Label
					}
				}
				for _, tr := range b.Triples {
					if want[tr.Head] && want[tr.Tail] {
						w.Triples = append(w.Triples, tr)
					}
				}
				return w
			},
		}
	})
}
