package textgraph_test

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/datapath/datatest"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/textgraph"
	"github.com/dmar-kg/dmar/internal/textgraph/textgraphtest"
)

func TestMemoryConformance(t *testing.T) {
	m, _, _ := textgraphtest.Build(t)
	textgraphtest.Run(t, m, m)
}

// After the suite's live writes, the embedded graph still walks and
// matches as the plain reference computes from its export, and a second
// graph given the same writes holds the same nodes and edges.
func TestMemoryAfterWrites(t *testing.T) {
	m, _, b := textgraphtest.Build(t)
	other, _, _ := textgraphtest.Build(t)
	n0, _ := m.Export()
	textgraphtest.Writes(t, other, m, b)
	if n1, _ := m.Export(); len(n1) <= len(n0) {
		t.Errorf("%d nodes after the writes, %d before: the new passages added none", len(n1), len(n0))
	}
	sameGraph(t, "after the same writes (-first +second)", m, other)
	textgraphtest.Run(t, other, m)
}

// A snapshot reads back as the same graph.
func TestSnapshotRoundTrip(t *testing.T) {
	m, _, _ := textgraphtest.Build(t)
	back := datatest.RoundTrip(t, m, textgraph.Load)
	sameGraph(t, "after the round trip (-want +got)", m, back)
	textgraphtest.Run(t, back, m)
}

// Putting a passage again replaces its part of the graph, and deleting it
// takes that part back: the graph is as if it had never been put.
func TestPutAndDeleteAreExact(t *testing.T) {
	ctx := context.Background()
	m, docs, b := textgraphtest.Build(t)
	nodes, edges := m.Export()
	d := docs[3]
	changed := d
	changed.Text = "Zyxwvut Qwerty met Christopher Nolan in Paris."
	if err := m.Put(ctx, b, docs[3:4]); err != nil { // the same again
		t.Fatal(err)
	}
	if n, e := m.Export(); !cmp.Equal(len(n), len(nodes)) || !cmp.Equal(e, edges) {
		t.Errorf("putting a passage again changed the graph: %d -> %d nodes, edges equal %v", len(nodes), len(n), cmp.Equal(e, edges))
	}
	if err := m.Put(ctx, b, []retrieval.Document{changed}); err != nil {
		t.Fatal(err)
	}
	sg, err := m.Neighbourhood(ctx, []string{textgraph.PassageKey(d.ID)}, textgraph.Params{Hops: 1, HubDegree: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(sg.Nodes, func(n textgraph.Node) bool { return n.Key == "p:zyxwvut qwerty" }) {
		t.Errorf("the changed passage does not hold its new phrase: %+v", sg.Nodes)
	}
	if err := m.Delete(ctx, []string{d.ID}); err != nil {
		t.Fatal(err)
	}
	sg, _ = m.Neighbourhood(ctx, []string{textgraph.PassageKey(d.ID)}, textgraph.Params{Hops: 1, HubDegree: 100})
	if len(sg.Edges) != 0 {
		t.Errorf("a deleted passage still has edges: %+v", sg.Edges)
	}
}
