package kgchan

import (
	"context"
	"errors"
	"testing"

	"github.com/dmar-kg/dmar/internal/corpus/corpustest"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
	"github.com/google/go-cmp/cmp"
)

// The channel's neighbourhoods read in two calls (the linked roots while
// stage 1 searches, then the roots stage 1 added) are what one call for
// every root reads: subgraphs and degrees, a hub root's star included;
// a prefetch for other mentions is not used.
func TestPrefetchedNeighbourhoodsEqualOneCall(t *testing.T) {
	g, _, err := corpustest.Graph(context.Background(), "codexm-film")
	if errors.Is(err, corpustest.ErrNoData) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	// the dmar method's walk: two hops
	r := Channel{Graph: g, Options: Options{Recall: 2, K: 50, Weight: 0.3, Relations: "plain", HubDegree: 100}} // the United States (Q30) has 160 edges in codexm-film: a hub root
	ctx := context.Background()
	// the United States (Q30) is a hub; Nolan (Q25191) is not; the
	// top stage-1 document's entity (Inception, Q25188) is added after.
	linked := []kg.Mention{{QID: "Q30", Surface: "United States"}, {QID: "Q25191", Surface: "Christopher Nolan"}}
	roots := append(pathrel.Mentioned("Q30", "Q25191"), pathrel.Root{QID: "Q25188"})

	one, err := r.neighbourhoods(ctx, roots, nil)
	if err != nil {
		t.Fatal(err)
	}
	pf := r.PrefetchNeighbourhoods(ctx, linked)
	if pf == nil {
		t.Fatal("no prefetch for two linked entities")
	}
	two, err := r.neighbourhoods(ctx, roots, pf.of(linked))
	if err != nil {
		t.Fatal(err)
	}
	hub := false
	for _, n := range one.Subs["Q30"].Nodes {
		hub = hub || (n.QID == "Q30" && n.Hub)
	}
	if len(one.Subs) != 3 || !hub {
		t.Fatalf("the case tests no hub root among 3: %d subgraphs", len(one.Subs))
	}
	if d := cmp.Diff(one, two, cmp.AllowUnexported(Neighbourhoods{})); d != "" {
		t.Errorf("two calls differ from one (-one +two):\n%s", d)
	}
	if pf.of([]kg.Mention{{QID: "Q25191"}}) != nil {
		t.Error("a prefetch for other mentions was used")
	}
}
