package kgchan

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dmar-kg/dmar/internal/corpus/corpustest"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
)

// filmChannel is the dmar method's graph channel over codexm-film, its
// documents embedded with scoringtest.Words.
func filmChannel(t *testing.T) Channel {
	t.Helper()
	ctx := context.Background()
	g, dir, err := corpustest.Graph(ctx, "codexm-film")
	if errors.Is(err, corpustest.ErrNoData) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	_, x, err := corpustest.Index(ctx, g, dir, scoringtest.Words{})
	if err != nil {
		t.Fatal(err)
	}
	// the United States (Q30) has 160 edges in codexm-film: a hub root
	return Channel{Graph: g, Docs: x, RelationTexts: pathrel.NewRelations(scoringtest.Words{}, false), Encoder: scoringtest.Words{},
		Options: Options{Recall: 2, K: 50, Weight: 0.3, Relations: "plain", Roots: 1, Popularity: 0.01, RelationQuery: "masked", HubDegree: 100}}
}

// The channel's neighbourhoods read in two calls (the linked roots while
// stage 1 searches, then the roots stage 1 added) are what one call for
// every root reads: subgraphs and degrees, a hub root's star included;
// a run ahead for other mentions is not used.
func TestAheadNeighbourhoodsEqualOneCall(t *testing.T) {
	r := filmChannel(t)
	ctx := context.Background()
	// the United States (Q30) is a hub; Nolan (Q25191) is not; the
	// top stage-1 document's entity (Inception, Q25188) is added after.
	linked := []kg.Mention{{QID: "Q30", Surface: "United States"}, {QID: "Q25191", Surface: "Christopher Nolan"}}
	roots := append(pathrel.Mentioned("Q30", "Q25191"), pathrel.Root{QID: "Q25188"})

	one, err := r.neighbourhoods(ctx, roots, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := r.RunAhead(ctx, chanio.Query{Text: "films of Christopher Nolan in the United States", Mentions: linked, RelVector: chanio.Encoded(scoringtest.WordVector("films of in the"))})
	if a == nil {
		t.Fatal("no run ahead for two linked entities")
	}
	two, err := r.neighbourhoods(ctx, roots, a.Of(linked))
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
	if a.Of([]kg.Mention{{QID: "Q25191"}}) != nil {
		t.Error("a run ahead for other mentions was used")
	}
}

// events is a trace that keeps what it is told.
type events struct{ fallbacks, stages []string }

func (e *events) Fallback(name, _ string)          { e.fallbacks = append(e.fallbacks, name) }
func (e *events) HasFallback(string) bool          { return false }
func (e *events) Add(name string, _ time.Duration) { e.stages = append(e.stages, name) }

// Run returns what it returns without a run ahead, and records the same
// trace: when the walk's paths are taken whole (stage 1 adds no root), when
// the walk is extended with the root stage 1 adds (the United States, a
// hub: no walk goes through it), and when it cannot be (Inception, which
// Nolan directed: the walk ahead went through it); and so with the run
// ahead speculating (Speculate: its whole output taken, or cancelled), and
// started before Q is encoded (enc(Q) given after). A run ahead that read
// another relation query (an early link's mentions masked otherwise) is
// not used.
func TestRunAheadEqualsRun(t *testing.T) {
	r := filmChannel(t)
	ctx := context.Background()
	text := "Which films did Christopher Nolan direct?"
	qv, _ := scoringtest.Words{}.Encode(ctx, []string{text})
	other, _ := scoringtest.Words{}.Encode(ctx, []string{"Where was born?"})
	nolan := []kg.Mention{{QID: "Q25191", Surface: "Christopher Nolan", Start: 16, End: 33}}
	for _, c := range []struct {
		name string
		hits []retrieval.Hit
	}{
		{"no root added", nil},
		{"the top document is the linked entity's", []retrieval.Hit{{Doc: retrieval.Document{ID: "Q25191"}}}},
		{"a hub added", []retrieval.Hit{{Doc: retrieval.Document{ID: "Q30"}}}},
		{"a root walked through added", []retrieval.Hit{{Doc: retrieval.Document{ID: "Q25188"}}}},
	} {
		for _, v := range []struct {
			speculate, early, otherQuery bool
		}{{false, false, false}, {true, false, false}, {true, true, false}, {false, true, true}, {true, true, true}} {
			t.Run(fmt.Sprintf("%s/%+v", c.name, v), func(t *testing.T) {
				q := chanio.Query{Text: text, Vector: qv[0], RelVector: chanio.Encoded(qv[0]), Mentions: nolan, Hits: c.hits}
				var wantTr, gotTr events
				want, err := r.Run(ctx, q, &wantTr)
				if err != nil {
					t.Fatal(err)
				}
				ahead := r
				ahead.Speculate = v.speculate
				ahead.RelationAhead = r.PrefetchRelationQuery(ctx, q)
				started := ahead
				if v.otherQuery {
					started.RelationAhead = Encoded(nolan, other[0], nil)
				}
				early := q
				if v.early {
					early.Vector, early.Hits = nil, nil
				}
				ahead.Ahead = started.RunAhead(ctx, early)
				if ahead.Ahead == nil {
					t.Fatal("no run ahead")
				}
				ahead.Ahead.SetVector(q.Vector)
				got, err := ahead.Run(ctx, q, &gotTr)
				if err != nil {
					t.Fatal(err)
				}
				opts := cmp.Options{cmp.AllowUnexported(Walk{}, Neighbourhoods{})}
				if d := cmp.Diff(want, got, opts...); d != "" {
					t.Errorf("with a run ahead (-without +with):\n%s", d)
				}
				if d := cmp.Diff(wantTr, gotTr, cmp.AllowUnexported(events{})); d != "" {
					t.Errorf("trace (-without +with):\n%s", d)
				}
				if len(want.Hits) == 0 || len(want.Reached) < 100 {
					t.Errorf("%d hits, %d entities reached: the case tests little", len(want.Hits), len(want.Reached))
				}
			})
		}
	}
}
