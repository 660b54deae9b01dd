package pathrel

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
)

// bagEncoder embeds a text as counts over a fixed vocabulary, and counts
// its calls.
type bagEncoder struct {
	vocab []string
	calls int
	texts int
}

func (b *bagEncoder) Encode(_ context.Context, texts []string) ([][]float32, error) {
	b.calls++
	b.texts += len(texts)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(b.vocab))
		for _, w := range strings.Fields(t) {
			for j, x := range b.vocab {
				if w == x {
					v[j]++
				}
			}
		}
		out[i] = v
	}
	return out, nil
}
func (b *bagEncoder) Dim() int        { return len(b.vocab) }
func (b *bagEncoder) Version() string { return "bag-v1" }

var vocab = []string{"place", "birth", "spouse", "of", "country", "citizenship"}

func textVec(t string) []float32 {
	v, _ := (&bagEncoder{vocab: vocab}).Encode(context.Background(), []string{t})
	return v[0]
}

// A -[P19 place of birth]-> B -[P17 country]-> C; D -[P26 spouse]-> A;
// A -[P27 citizenship]-> H (a hub) -[P17 country]-> E.
func graph() map[string]kg.Subgraph {
	return map[string]kg.Subgraph{"A": {
		Root: "A",
		Nodes: []kg.Node{{QID: "A"}, {QID: "B", Hop: 1}, {QID: "D", Hop: 1}, {QID: "H", Hop: 1, Hub: true},
			{QID: "C", Hop: 2}, {QID: "E", Hop: 2}},
		Edges: []kg.Edge{
			{From: "A", To: "B", PID: "P19", Label: "place birth"},
			{From: "B", To: "C", PID: "P17", Label: "country"},
			{From: "D", To: "A", PID: "P26", Label: "spouse"},
			{From: "A", To: "H", PID: "P27", Label: "citizenship"},
			{From: "H", To: "E", PID: "P17", Label: "country"},
		},
	}}
}

func byEntity(ps []Path) map[string]Path {
	m := map[string]Path{}
	for _, p := range ps {
		m[p.Entity] = p
	}
	return m
}

func TestReachOneHop(t *testing.T) {
	enc := &bagEncoder{vocab: vocab}
	r := NewRelations(enc, false)
	ps, err := r.Reach(context.Background(), textVec("place birth"), Mentioned("A"), graph(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 {
		t.Fatalf("got %d paths, want B, D, H: %+v", len(ps), ps)
	}
	if ps[0].Entity != "B" || math.Abs(ps[0].Relevance-1) > 1e-9 {
		t.Fatalf("best path %+v, want B with relevance 1", ps[0])
	}
	if got := ps[0].String(); got != "A -[place birth]-> B" {
		t.Fatalf("path text %q", got)
	}
	m := byEntity(ps)
	if d := m["D"]; !d.Steps[0].Backward || d.Steps[0].To != "D" || d.Relevance != 0 {
		t.Fatalf("D's path %+v, want a backwards step with relevance 0", d)
	}
	if _, ok := m["C"]; ok {
		t.Fatal("C is two hops away")
	}
}

func TestReachTwoHopsSkipsHubs(t *testing.T) {
	r := NewRelations(&bagEncoder{vocab: vocab}, false)
	ps, err := r.Reach(context.Background(), textVec("country"), Mentioned("A"), graph(), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := byEntity(ps)
	c, ok := m["C"]
	if !ok || len(c.Steps) != 2 {
		t.Fatalf("C not reached in two steps: %+v", ps)
	}
	if want := (0+1.0)/2 - TwoHopPenalty; math.Abs(c.Relevance-want) > 1e-9 {
		t.Fatalf("C's relevance %v, want %v", c.Relevance, want)
	}
	if _, ok := m["E"]; ok {
		t.Fatal("E is reached only through the hub H")
	}
	if _, ok := m["A"]; ok {
		t.Fatal("the root is not a reachable entity")
	}
}

func TestDirectedTextsAndCache(t *testing.T) {
	enc := &bagEncoder{vocab: vocab}
	r := NewRelations(enc, true)
	ps, err := r.Reach(context.Background(), textVec("spouse of"), Mentioned("A"), graph(), 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].Entity != "D" || math.Abs(ps[0].Relevance-1) > 1e-9 {
		t.Fatalf("best %+v, want D by the backwards text \"spouse of\"", ps[0])
	}
	if got := ps[0].String(); got != "A -[spouse of]-> D" {
		t.Fatalf("path text %q", got)
	}
	calls, texts := enc.calls, enc.texts
	if calls != 1 || texts != 8 {
		t.Fatalf("%d calls, %d texts; want 1 call for 4 relations x 2 directions", calls, texts)
	}
	if _, err := r.Reach(context.Background(), textVec("country"), Mentioned("A"), graph(), 2, nil); err != nil {
		t.Fatal(err)
	}
	if enc.calls != calls || enc.texts != texts {
		t.Fatalf("the second walk encoded %d texts in %d calls; every relation is cached", enc.texts-texts, enc.calls-calls)
	}
}

func TestReachUnknownRootAndZeroHops(t *testing.T) {
	r := NewRelations(&bagEncoder{vocab: vocab}, false)
	ps, err := r.Reach(context.Background(), textVec("country"), Mentioned("Z"), graph(), 1, nil)
	if err != nil || len(ps) != 0 {
		t.Fatalf("unknown root: %v, %v", ps, err)
	}
	if ps, _ := r.Reach(context.Background(), textVec("country"), Mentioned("A"), graph(), 0, nil); len(ps) != 0 {
		t.Fatalf("hops 0: %v", ps)
	}
}

// A root taken from a search hit is an answer when another root reaches it;
// a mentioned root never is.
func TestReachReturnsSearchRootsNotMentionedOnes(t *testing.T) {
	subs := graph()
	subs["B"] = kg.Subgraph{Root: "B", Nodes: []kg.Node{{QID: "B"}, {QID: "A", Hop: 1}, {QID: "C", Hop: 1}},
		Edges: []kg.Edge{{From: "A", To: "B", PID: "P19", Label: "place birth"}, {From: "B", To: "C", PID: "P17", Label: "country"}}}
	r := NewRelations(&bagEncoder{vocab: vocab}, false)
	ps, err := r.Reach(context.Background(), textVec("place birth"), []Root{{QID: "A", Mentioned: true}, {QID: "B"}}, subs, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := byEntity(ps)
	if b, ok := m["B"]; !ok || b.Root() != "A" || b.Relevance != 1 {
		t.Fatalf("B (a search root reached from A by place of birth) = %+v, %v; want it returned with A's path", b, ok)
	}
	if _, ok := m["A"]; ok {
		t.Fatalf("A is mentioned in Q: it must not be returned, got %+v", m["A"])
	}
	if c := m["C"]; c.Root() != "B" || len(c.Steps) != 1 {
		t.Fatalf("C = %+v, want one hop from B", c)
	}
}

// An entity two hops away through several intermediates outranks one
// reached through one: each intermediate is another piece of evidence.
func TestReachTwoHopsRewardsSeveralIntermediates(t *testing.T) {
	sg := kg.Subgraph{Root: "A",
		Nodes: []kg.Node{{QID: "A"}, {QID: "B1", Hop: 1}, {QID: "B2", Hop: 1}, {QID: "B3", Hop: 1}, {QID: "X", Hop: 2}, {QID: "Y", Hop: 2}},
		Edges: []kg.Edge{
			{From: "A", To: "B1", PID: "P19", Label: "place birth"},
			{From: "A", To: "B2", PID: "P19", Label: "place birth"},
			{From: "A", To: "B3", PID: "P19", Label: "place birth"},
			{From: "B1", To: "X", PID: "P17", Label: "country"},
			{From: "B2", To: "X", PID: "P17", Label: "country"},
			{From: "B3", To: "Y", PID: "P17", Label: "country"},
		}}
	r := NewRelations(&bagEncoder{vocab: vocab}, false)
	ps, err := r.Reach(context.Background(), textVec("country"), Mentioned("A"), map[string]kg.Subgraph{"A": sg}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := byEntity(ps)
	base := (0+1.0)/2 - TwoHopPenalty
	if y := m["Y"].Relevance; math.Abs(y-base) > 1e-9 {
		t.Fatalf("Y (one intermediate) relevance %v, want %v", y, base)
	}
	if x, want := m["X"].Relevance, base+ViaBonus*math.Log(2); math.Abs(x-want) > 1e-9 {
		t.Fatalf("X (two intermediates) relevance %v, want %v", x, want)
	}
	if ps[0].Entity != "X" {
		t.Fatalf("best entity %s, want X", ps[0].Entity)
	}
}

// Warm embeds every relation text of the subgraphs once, in one call, so
// that a walk over them encodes nothing and finds the same paths.
func TestWarmEmbedsEveryRelationOnce(t *testing.T) {
	for _, directed := range []bool{false, true} {
		enc := &bagEncoder{vocab: vocab}
		r := NewRelations(enc, directed)
		n, err := r.Warm(context.Background(), graph())
		if err != nil {
			t.Fatal(err)
		}
		want := 4 // P19, P17, P26, P27
		if directed {
			want = 8
		}
		if n != want || enc.calls != 1 || enc.texts != want {
			t.Errorf("directed %t: %d cached, %d calls, %d texts; want %d in 1 call", directed, n, enc.calls, enc.texts, want)
		}
		warm, err := r.Reach(context.Background(), textVec("place birth"), Mentioned("A"), graph(), 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		if enc.calls != 1 {
			t.Errorf("directed %t: the walk after Warm called the encoder again (%d calls)", directed, enc.calls)
		}
		cold, err := NewRelations(&bagEncoder{vocab: vocab}, directed).Reach(context.Background(), textVec("place birth"), Mentioned("A"), graph(), 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(warm) != len(cold) {
			t.Fatalf("directed %t: %d paths warm, %d cold", directed, len(warm), len(cold))
		}
		for i := range warm {
			if warm[i].String() != cold[i].String() || warm[i].Relevance != cold[i].Relevance {
				t.Errorf("directed %t: path %d warm %v (%.3f), cold %v (%.3f)", directed, i, warm[i], warm[i].Relevance, cold[i], cold[i].Relevance)
			}
		}
	}
}
