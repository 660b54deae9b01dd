package neo4jkg_test

import (
	"context"
	"testing"

	"github.com/dmar-kg/dmar/internal/textgraph/textgraphtest"
)

// The text graph written to Neo4j passes the suite the embedded one does
// (internal/textgraph): the same neighbourhoods, matches and rankings; and
// after live writes (a put, a change, deletes) made to both, it still does.
func TestTextGraph(t *testing.T) {
	for _, c := range []struct {
		name   string
		writes bool
	}{{"Conformance", false}, {"LiveWrites", true}} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := holding(t, "codexm-film")
			m, _, b := textgraphtest.Build(t)
			tg := s.TextGraph()
			if err := tg.Replace(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			if c.writes {
				textgraphtest.Writes(t, tg, m, b)
			}
			textgraphtest.Run(t, tg, m)
		})
	}
}
