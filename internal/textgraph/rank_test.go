package textgraph

import (
	"context"
	"strconv"
	"testing"
)

// tiny is a subgraph: passage p1 holds phrase a, p2 holds b, a and b are
// synonyms, p3 holds c, which nothing else touches.
func tiny() Subgraph {
	nodes := []Node{{Key: "p:a", Label: "a"}, {Key: "d:p1", Kind: PassageNode, Label: "P1"}, {Key: "p:b", Label: "b"},
		{Key: "d:p2", Kind: PassageNode, Label: "P2"}, {Key: "p:c", Label: "c"}, {Key: "d:p3", Kind: PassageNode, Label: "P3"}}
	edges := []Edge{{A: 0, B: 1, Kind: Contains, W: 1}, {A: 0, B: 2, Kind: Synonym, W: 0.9}, {A: 2, B: 3, Kind: Contains, W: 1}, {A: 4, B: 5, Kind: Contains, W: 1}}
	for i := range edges {
		edges[i].From, edges[i].To = nodes[edges[i].A].Key, nodes[edges[i].B].Key
	}
	return Subgraph{Nodes: nodes, Edges: edges}
}

func TestRank(t *testing.T) {
	res, err := Rank(context.Background(), tiny(), []Seed{{Key: "p:a", W: 2, Why: "question phrase"}, {Key: "p:ghost", W: 5}}, DefaultRankParams())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Doc != "p1" || res[1].Doc != "p2" {
		t.Fatalf("ranking %+v, want p1 then p2 (p3 is unreachable)", res)
	}
	if got := PathText(res[1]); got != "a (question phrase) -[synonym]- b -[contains]- P2" {
		t.Errorf("p2's path %q", got)
	}
	// The scores are a distribution's part: with damping 0.5, the restart
	// keeps half of the mass at the seed.
	total := 0.0
	for _, r := range res {
		total += r.Score
	}
	if total <= 0 || total >= 0.5 {
		t.Errorf("passages hold %.3f of the mass, want in (0, 0.5)", total)
	}
	// A passage seed ranks itself first.
	res, _ = Rank(context.Background(), tiny(), []Seed{{Key: "d:p3", W: 1}}, DefaultRankParams())
	if len(res) != 1 || res[0].Doc != "p3" || !(res[0].Score > 0.5) {
		t.Errorf("seeded at p3: %+v", res)
	}
	if res, _ := Rank(context.Background(), tiny(), nil, DefaultRankParams()); res != nil {
		t.Errorf("no seeds: %+v, want nothing", res)
	}
}

// BenchmarkRank walks a synthetic subgraph: 400 passages, 1,200 phrases
// each in three passages, phrases joined by synonym edges.
func BenchmarkRank(b *testing.B) {
	const passages, phrases = 400, 1200
	var sg Subgraph
	for i := 0; i < passages; i++ {
		sg.Nodes = append(sg.Nodes, Node{Key: "d:p" + strconv.Itoa(i), Kind: PassageNode, Label: "P", Hop: 1 + i%2})
	}
	for i := 0; i < phrases; i++ {
		sg.Nodes = append(sg.Nodes, Node{Key: "p:" + strconv.Itoa(i), Label: "x", Hop: i % 3})
	}
	for i := 0; i < phrases; i++ {
		for k := 0; k < 3; k++ {
			sg.Edges = append(sg.Edges, Edge{A: passages + i, B: (i*7 + k*131) % passages, Kind: Contains, W: 1})
		}
		sg.Edges = append(sg.Edges, Edge{A: passages + i, B: passages + (i*13+5)%phrases, Kind: Synonym, W: 0.8})
	}
	seeds := []Seed{{Key: "p:0", W: 1}, {Key: "p:17", W: 0.5}, {Key: "d:p3", W: 0.2}}
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Rank(ctx, sg, seeds, DefaultRankParams()); err != nil {
			b.Fatal(err)
		}
	}
}
