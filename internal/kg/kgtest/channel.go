package kgtest

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
)

// What the question-aware path reads from the graph, beyond Link and
// Subgraphs: the graph channel's neighbourhoods (kg.Neighbourhoods, through
// the backend's one round trip when it has one) and the entities whose
// labels, aliases and descriptions the request shows and scores.

// channelParams are the channel's shapes (the pipeline walks with 4000
// nodes and the request's hub cap) and the cases of the star rule: a cut
// star, hub neighbours, no hop (no star), no cap.
var channelParams = []kg.SubgraphParams{
	{Hops: 1, MaxNodes: 4000, HubDegree: 500},
	{Hops: 2, MaxNodes: 4000, HubDegree: 500},
	{Hops: 2, MaxNodes: 4000, HubDegree: 40},
	{Hops: 1, MaxNodes: 6, HubDegree: 10},
	{Hops: 0, MaxNodes: 64, HubDegree: 10},
	{Hops: 1, MaxNodes: 0, HubDegree: 0},
}

func runNeighbourhoods(t *testing.T, ref *reference, g kg.Graph, roots []string) {
	ctx := context.Background()
	for _, p := range channelParams {
		t.Run(fmt.Sprintf("Neighbourhoods/h%d-n%d-hub%d", p.Hops, p.MaxNodes, p.HubDegree), func(t *testing.T) {
			query := append([]string{"Q999999999999"}, roots...)
			query = append(query, roots[0])
			got, err := kg.Neighbourhoods(ctx, g, query, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(roots) {
				t.Fatalf("got %d neighbourhoods for %d known roots", len(got), len(roots))
			}
			for _, r := range roots {
				if diff := cmp.Diff(ref.neighbourhood(r, p), got[r]); diff != "" {
					t.Errorf("neighbourhood of %s (-want +got):\n%s", r, diff)
				}
			}
		})
	}

	runNeighbourhoodDegrees(t, ref, g, roots)

	// The cases must reach what they claim: stars, a cut one, hub
	// neighbours in one, and a hub root at the channel's own hub cap.
	t.Run("NeighbourhoodCasesCoverTheRules", func(t *testing.T) {
		star, cut, hubNbr := 0, false, false
		for _, r := range roots {
			sg := ref.neighbourhood(r, kg.SubgraphParams{Hops: 1, MaxNodes: 6, HubDegree: 10})
			if !sg.Nodes[0].Hub {
				continue
			}
			star++
			cut = cut || sg.Truncated
			for _, n := range sg.Nodes[1:] {
				hubNbr = hubNbr || n.Hub
			}
		}
		atCap := false
		for _, r := range roots {
			atCap = atCap || ref.neighbourhood(r, kg.SubgraphParams{Hops: 2, MaxNodes: 4000, HubDegree: 40}).Nodes[0].Hub
		}
		if star < 2 || !cut || !hubNbr || !atCap {
			t.Errorf("sample lacks a case: %d stars, cut %v, hub neighbour %v, hub root at hub cap 40 %v", star, cut, hubNbr, atCap)
		}
	})

	t.Run("NeighbourhoodsCancelledContext", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := kg.Neighbourhoods(c, g, roots, channelParams[0]); err == nil {
			t.Error("Neighbourhoods with a cancelled context returned no error")
		}
		if _, _, err := kg.NeighbourhoodsWithDegrees(c, g, roots, channelParams[0]); err == nil {
			t.Error("NeighbourhoodsWithDegrees with a cancelled context returned no error")
		}
	})
}

// A backend that reads the nodes' degrees with the neighbourhoods
// (kg.NeighbourhoodDegreeReader) answers the same neighbourhoods and
// Entity.Degree for every node of them, and nothing else.
func runNeighbourhoodDegrees(t *testing.T, ref *reference, g kg.Graph, roots []string) {
	ctx := context.Background()
	_, isDR := g.(kg.NeighbourhoodDegreeReader)
	for _, p := range channelParams {
		t.Run(fmt.Sprintf("NeighbourhoodDegrees/h%d-n%d-hub%d", p.Hops, p.MaxNodes, p.HubDegree), func(t *testing.T) {
			query := append([]string{"Q999999999999"}, roots...)
			got, deg, err := kg.NeighbourhoodsWithDegrees(ctx, g, query, p)
			if err != nil {
				t.Fatal(err)
			}
			if isDR != (deg != nil) {
				t.Fatalf("degrees %v from a graph that is a NeighbourhoodDegreeReader: %v", deg != nil, isDR)
			}
			want := map[string]int{}
			for _, r := range roots {
				sg := ref.neighbourhood(r, p)
				if diff := cmp.Diff(sg, got[r]); diff != "" {
					t.Errorf("neighbourhood of %s (-want +got):\n%s", r, diff)
				}
				for _, n := range sg.Nodes {
					want[n.QID] = ref.degree[n.QID]
				}
			}
			if deg != nil {
				if diff := cmp.Diff(want, deg); diff != "" {
					t.Errorf("degrees of the %d nodes (-want +got):\n%s", len(want), diff)
				}
			}
		})
	}
}

// runEntities checks every field of many entities at once: the query
// entities and the nodes of their subgraphs, as the pipeline asks for them.
func runEntities(t *testing.T, b *bundle.KG, ref *reference, g kg.Graph, roots []string) {
	t.Run("EntitiesOfSubgraphs", func(t *testing.T) {
		seen := map[string]bool{}
		var qids []string
		for _, r := range roots {
			for _, n := range ref.subgraph(r, kg.SubgraphParams{Hops: 1, MaxNodes: 64, HubDegree: 500}).Nodes {
				if !seen[n.QID] {
					seen[n.QID] = true
					qids = append(qids, n.QID)
				}
			}
		}
		got, err := g.Entities(context.Background(), append(qids, "Q999999999999"))
		if err != nil {
			t.Fatal(err)
		}
		byQID := make(map[string]kg.Entity, len(b.Entities))
		for _, e := range b.Entities {
			e.Degree = ref.degree[e.QID]
			byQID[e.QID] = e
		}
		want := make(map[string]kg.Entity, len(qids))
		aliased := 0
		for _, q := range qids {
			want[q] = byQID[q]
			if len(byQID[q].Aliases) > 0 {
				aliased++
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Entities of %d subgraph nodes (-want +got):\n%s", len(qids), diff)
		}
		if len(qids) < 100 || aliased == 0 {
			t.Errorf("%d entities, %d with aliases: the case proves little", len(qids), aliased)
		}
		// A backend that reads degrees alone (kg.DegreeReader) reads
		// Entities' degrees, of the known entities only.
		dr, ok := g.(kg.DegreeReader)
		if !ok {
			return
		}
		deg, err := dr.Degrees(context.Background(), append(qids, "Q999999999999"))
		if err != nil {
			t.Fatal(err)
		}
		wantDeg := make(map[string]int, len(qids))
		for _, q := range qids {
			wantDeg[q] = ref.degree[q]
		}
		if diff := cmp.Diff(wantDeg, deg); diff != "" {
			t.Errorf("Degrees of %d subgraph nodes (-want +got):\n%s", len(qids), diff)
		}
	})
}

// neighbourhood is the reference of kg.Neighbourhoods.
func (r *reference) neighbourhood(root string, p kg.SubgraphParams) kg.Subgraph {
	isHub := func(q string) bool { return p.HubDegree > 0 && r.degree[q] > p.HubDegree }
	if p.Hops < 1 || !isHub(root) {
		sg := r.subgraph(root, p)
		sg.Edges = kg.WalkedEdges(sg, p)
		return sg
	}
	nbrs := make([]string, 0, len(r.nbrs[root]))
	for v := range r.nbrs[root] {
		if v != root {
			nbrs = append(nbrs, v)
		}
	}
	sort.Strings(nbrs)
	sg := kg.Subgraph{Root: root, Nodes: []kg.Node{{QID: root, Label: r.label[root], Hub: true}}}
	if p.MaxNodes > 0 && len(nbrs) > p.MaxNodes-1 {
		nbrs, sg.Truncated = nbrs[:p.MaxNodes-1], true
	}
	held := map[string]bool{root: true}
	for _, v := range nbrs {
		held[v] = true
		sg.Nodes = append(sg.Nodes, kg.Node{QID: v, Label: r.label[v], Hop: 1, Hub: isHub(v)})
	}
	for _, e := range r.edges[root] {
		if (e.From == root && held[e.To]) || (e.To == root && held[e.From]) {
			sg.Edges = append(sg.Edges, e)
		}
	}
	kg.SortEdges(sg.Edges)
	return sg
}
