package kgchan

import (
	"context"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"testing"

	"github.com/dmar-kg/dmar/internal/corpus/corpustest"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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
	pf := r.PrefetchNeighbourhoods(ctx, chanio.Query{Mentions: linked})
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
	if d := cmp.Diff(one, two, cmp.AllowUnexported(Neighbourhoods{}), cmpopts.IgnoreFields(Neighbourhoods{}, "ahead", "aheadRoots")); d != "" {
		t.Errorf("two calls differ from one (-one +two):\n%s", d)
	}
	if pf.of([]kg.Mention{{QID: "Q25191"}}) != nil {
		t.Error("a prefetch for other mentions was used")
	}
}

// textHash embeds a text as a seeded random vector of its bytes' hash: the
// walk needs relation vectors, not a model.
type textHash struct{}

func (textHash) Encode(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		rng := rand.New(rand.NewPCG(h.Sum64(), 2))
		v := make([]float32, 16)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		out[i] = v
	}
	return out, nil
}
func (textHash) Dim() int        { return 16 }
func (textHash) Version() string { return "hash-16" }

// The reach stage finds what the walk of every root at once finds when the
// linked roots were walked ahead and extended with the roots stage 1 added:
// one next to a linked root (the walk ahead went through it and is walked
// again) and one far from them (the walk ahead is extended).
func TestWalkAheadEqualsOneWalk(t *testing.T) {
	g, _, err := corpustest.Graph(context.Background(), "codexm-film")
	if errors.Is(err, corpustest.ErrNoData) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := Channel{Graph: g, RelationTexts: pathrel.NewRelations(textHash{}, false), Encoder: textHash{},
		Options: Options{Recall: 2, K: 50, Weight: 0.3, Relations: "plain", RelationQuery: "masked", HubDegree: 100}}
	nolan := []kg.Mention{{QID: "Q25191", Surface: "Christopher Nolan", Start: 24, End: 41}}
	q := chanio.Query{Text: "Which films did direct Christopher Nolan?", Mentions: nolan, RelVector: chanio.Encoded([]float32{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})}
	for _, added := range []string{"Q25188", "Q30"} { // Inception, which Nolan directed; the United States, a hub
		roots := append(pathrel.Mentioned("Q25191"), pathrel.Root{QID: added})
		one, err := r.neighbourhoods(ctx, roots, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := r.reach(ctx, q, one, nopTrace{})
		if err != nil {
			t.Fatal(err)
		}
		ahead := r
		ahead.RelationAhead = r.PrefetchRelationQuery(ctx, q)
		pf := ahead.PrefetchNeighbourhoods(ctx, q)
		nb, err := ahead.neighbourhoods(ctx, roots, pf.of(nolan))
		if err != nil {
			t.Fatal(err)
		}
		if nb.ahead == nil {
			t.Fatal("the linked root was not walked ahead")
		}
		got, err := ahead.reach(ctx, q, nb, nopTrace{})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want.Reached, got.Reached); d != "" {
			t.Errorf("added %s: the walk ahead differs from one walk (-one +ahead):\n%s", added, d)
		}
		if len(want.Reached) < 100 {
			t.Errorf("added %s: %d entities reached, the case tests little", added, len(want.Reached))
		}
	}
}
