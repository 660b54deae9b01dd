package neo4jcsv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/kgtest"
)

// The CSV sink keeps the kg.Sink contract; what it wrote is read back from
// nodes.csv and relationships.csv, the columns neo4j-admin import reads.
func TestSinkConformance(t *testing.T) {
	kgtest.RunSink(t, func(t *testing.T) kgtest.SinkOutput {
		dir := t.TempDir()
		return kgtest.SinkOutput{
			Open: func(t *testing.T) kg.Sink {
				s, err := New(dir, Options{})
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			Read: func(t *testing.T, qids []string) kgtest.Written {
				w := kgtest.Written{Labels: map[string]string{}}
				if _, err := os.Stat(filepath.Join(dir, NodesFile)); os.IsNotExist(err) {
					return w
				}
				want := map[string]bool{}
				for _, q := range qids {
					want[q] = true
				}
				for _, r := range readCSV(t, filepath.Join(dir, NodesFile))[1:] {
					if want[r[0]] {
						w.Labels[r[0]] = r[2]
					}
				}
				for _, r := range readCSV(t, filepath.Join(dir, RelationshipsFile))[1:] {
					if want[r[0]] && want[r[1]] {
						w.Triples = append(w.Triples, kg.Triple{Head: r[0], PID: r[3], Tail: r[1]})
					}
				}
				return w
			},
		}
	})
}
