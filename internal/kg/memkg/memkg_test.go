package memkg_test

import (
	"context"
	"slices"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/datapath/datatest"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/kgtest"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
)

// load is the graph of the shared data set name, and its folder.
func load(t testing.TB, name string) (*memkg.Graph, string) {
	t.Helper()
	dir, err := datapath.Dataset(name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Read(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return memkg.FromBundle(b), dir
}

func TestConformance(t *testing.T) {
	kgtest.Datasets(t, func(t *testing.T, name string) {
		g, dir := load(t, name)
		kgtest.Run(t, dir, g)
	})
}

// plainGraph hides memkg's optional ports: kg.Neighbourhoods then composes
// the channel's neighbourhoods from Subgraphs and Entities, as for a backend
// without its own, and must give the same.
type plainGraph struct{ kg.Graph }

func TestConformanceFilmWithoutOptionalPorts(t *testing.T) {
	g, dir := load(t, "codexm-film")
	if _, ok := kg.Graph(plainGraph{g}).(kg.NeighbourhoodReader); ok {
		t.Fatal("plainGraph must hide Neighbourhoods")
	}
	kgtest.Run(t, dir, plainGraph{g})
}

func TestCandidateLinkerConformance(t *testing.T) {
	kgtest.Datasets(t, func(t *testing.T, name string) {
		g, dir := load(t, name)
		kgtest.RunCandidateLinker(t, dir, g)
	})
}

func TestSnapshotRoundTrip(t *testing.T) {
	g, dir := load(t, "codexm-film")
	kgtest.Run(t, dir, datatest.RoundTrip(t, g, memkg.Load))
}

func TestLinkRealNames(t *testing.T) {
	g, _ := load(t, "codexm-film")
	ctx := context.Background()
	cases := []struct {
		text string
		want []string
	}{
		// An alias ("Christopher Nolan") of a label derived from the extract
		// ("Christopher Edward Nolan"), case-insensitive, longest match first.
		{"Which films did Christopher Nolan direct?", []string{"Q25191"}},
		{"which films did CHRISTOPHER NOLAN direct", []string{"Q25191"}},
		{"Inception", []string{"Q25188"}},
		{"Who can tell us?", nil}, // "can" and "us" are Canada and USA aliases, but stopwords
	}
	for _, c := range cases {
		ms, err := g.Link(ctx, c.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := kg.QIDs(ms); !slices.Equal(got, c.want) {
			t.Errorf("Link(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}

func TestHubNotExpanded(t *testing.T) {
	g, _ := load(t, "codexm-film")
	ctx := context.Background()
	// Find the highest-degree entity and make it a hub.
	var top kg.Entity
	for _, e := range g.AllEntities() {
		if e.Degree > top.Degree {
			top = e
		}
	}
	p := kg.SubgraphParams{Hops: 1, MaxNodes: 64, HubDegree: top.Degree - 1}
	sgs, err := g.Subgraphs(ctx, []string{top.QID}, p)
	if err != nil {
		t.Fatal(err)
	}
	sg := sgs[top.QID]
	if len(sg.Nodes) != 1 || !sg.Nodes[0].Hub || len(sg.Edges) != 0 {
		t.Errorf("hub root %s (degree %d): got %d nodes, %d edges; want the root alone", top.QID, top.Degree, len(sg.Nodes), len(sg.Edges))
	}
	p.HubDegree = top.Degree
	sgs, _ = g.Subgraphs(ctx, []string{top.QID}, p)
	if n := len(sgs[top.QID].Nodes); n < 2 {
		t.Errorf("non-hub root %s expanded to %d nodes", top.QID, n)
	}
}
