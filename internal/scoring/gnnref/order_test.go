package gnnref

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat"
)

func cos(a, b []float64) float64 {
	var d float64
	for i := range a {
		d += a[i] * b[i]
	}
	return d
}

// orderingGraphs are docs/method.md's ordering case: the path A->B->C, the path
// A->C->B over the same entities and relations, and A->B->C with its edge
// B->C dropped.
func orderingGraphs() (path, reordered, dropped kg.Subgraph) {
	gs := []kg.Subgraph{}
	for _, order := range [][]string{{"Q25191", "Q25188", "Q2263"}, {"Q25191", "Q2263", "Q25188"}} {
		g := kg.Subgraph{Root: order[0]}
		for i, q := range order {
			g.Nodes = append(g.Nodes, kg.Node{QID: q, Hop: i})
		}
		g.Edges = []kg.Edge{{From: order[0], To: order[1], PID: "P57"}, {From: order[1], To: order[2], PID: "P161"}}
		gs = append(gs, g)
	}
	d := gs[0]
	d.Edges = d.Edges[:1]
	return gs[0], gs[1], d
}

// orderMargin is how much lower cos(A->B->C, A->C->B) must be than
// cos(A->B->C, one edge dropped): "clearly lower" in issue 3's words. 0.1 is far above float noise
// and a difference no retraining accident produces; the committed model has
// a gap of 0.46 (-0.32 vs 0.14), the model before the order triplets -0.27.
const orderMargin = 0.1

// The same entities and relations in another order (A->C->B) must embed
// clearly apart from A->B->C, and further apart than A->B->C with one edge
// dropped (issue 3): which entity sits where matters more than a lost edge.
// None of the three entities is a training anchor (models/gnn/traindata).
func TestReorderedPathEmbedsApart(t *testing.T) {
	p, r, d := orderingGraphs()
	b, _ := graphfeat.Featurize([]kg.Subgraph{p, r, d}, graphfeat.DefaultN)
	e := load(t).Forward(b)
	reord, drop := cos(e[0], e[1]), cos(e[0], e[2])
	t.Logf("cos(A->B->C, A->C->B) = %.3f; cos(A->B->C, one edge dropped) = %.3f", reord, drop)
	if reord > 0.8 {
		t.Fatalf("cos(A->B->C, A->C->B) = %.3f, want <= 0.8: order must change the embedding", reord)
	}
	if reord > drop-orderMargin {
		t.Fatalf("cos(A->B->C, A->C->B) = %.3f, want < cos(A->B->C, one edge dropped) - %.2f = %.3f", reord, orderMargin, drop-orderMargin)
	}
}

// chainMinShare is the share of random A->B->C chains that must pass the
// ordering criterion with orderMargin. The committed model reaches 0.69
// (0.81 without the margin); the model trained without order triplets 0.02.
const chainMinShare = 0.5

// The criterion is not a property of one lucky example: over random chains
// A-p->B-q->C (random QIDs, codexm's frequent PIDs), most put the reordered
// chain further from the path than the copy that lost B->C.
func TestReorderingOutweighsEdgeDropOnRandomChains(t *testing.T) {
	pids := []string{"P106", "P27", "P1412", "P136", "P463", "P69", "P161", "P19", "P530", "P1303", "P20", "P108", "P57"}
	r := rand.New(rand.NewPCG(3, 9))
	const n = 200
	var gs []kg.Subgraph
	for i := 0; i < n; i++ {
		q := func() string { return fmt.Sprintf("Q%d", 1+r.IntN(100000)) }
		a, b, c := q(), q(), q()
		p, s := pids[r.IntN(len(pids))], pids[r.IntN(len(pids))]
		for _, o := range [][]string{{a, b, c}, {a, c, b}} {
			g := kg.Subgraph{Root: a, Edges: []kg.Edge{{From: o[0], To: o[1], PID: p}, {From: o[1], To: o[2], PID: s}}}
			for h, x := range o {
				g.Nodes = append(g.Nodes, kg.Node{QID: x, Hop: h})
			}
			gs = append(gs, g)
		}
		d := gs[len(gs)-2]
		d.Edges = d.Edges[:1]
		gs = append(gs, d)
	}
	b, err := graphfeat.Featurize(gs, graphfeat.DefaultN)
	if err != nil {
		t.Fatal(err)
	}
	e := load(t).Forward(b)
	apart, before := 0, 0
	for i := 0; i < n; i++ {
		reord, drop := cos(e[3*i], e[3*i+1]), cos(e[3*i], e[3*i+2])
		if reord < drop {
			before++
		}
		if reord < drop-orderMargin {
			apart++
		}
	}
	share := float64(apart) / n
	t.Logf("%d random chains: reordered < dropped in %.2f, by %.2f or more in %.2f", n, float64(before)/n, orderMargin, share)
	if share < chainMinShare {
		t.Fatalf("reordered chain clearly less similar than the dropped copy in %.2f of chains, want >= %.2f", share, chainMinShare)
	}
}
