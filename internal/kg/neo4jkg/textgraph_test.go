package neo4jkg_test

import (
	"context"
	"testing"

	"github.com/dmar-kg/dmar/internal/textgraph/textgraphtest"
)

// The text graph written to Neo4j passes the suite the embedded one does
// (internal/textgraph): the same neighbourhoods, matches and rankings.
func TestTextGraphConformance(t *testing.T) {
	s, _ := holding(t, "codexm-film")
	m, _, _ := textgraphtest.Build(t)
	tg := s.TextGraph()
	if err := tg.Replace(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	textgraphtest.Run(t, tg, m)
}

// Live writes (a put, a change, deletes) leave the graph on Neo4j as they
// leave the embedded one: the suite passes on both after the same writes.
func TestTextGraphLiveWrites(t *testing.T) {
	s, _ := holding(t, "codexm-film")
	m, _, b := textgraphtest.Build(t)
	tg := s.TextGraph()
	if err := tg.Replace(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	textgraphtest.Writes(t, tg, m, b)
	textgraphtest.Run(t, tg, m)
}
