package pipeline

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline/kgchan"
	"github.com/dmar-kg/dmar/internal/pipeline/textchan"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// A question asks (a wh-word among its first three words, or a question
// mark); a claim or a lookup does not.
func TestIsQuestion(t *testing.T) {
	for q, want := range map[string]bool{
		"Which films did Christopher Nolan direct?":             true,
		"who got the first nobel prize in physics":              true,
		"Ezzard Charles was a world champion in which sport?":   true,
		"In 1990, who won the world cup":                        true,
		"what's the capital of france":                          true,
		"name a composer":                                       true,
		"Aristotle spent time in Athens.":                       false,
		"Magic Johnson did not play for the Lakers.":            false,
		"tell me about Christopher Nolan":                       false,
		"The film was directed by a man who was born in London": false,
	} {
		if got := isQuestion(q); got != want {
			t.Errorf("isQuestion(%q) = %v, want %v", q, got, want)
		}
	}
}

// agreement is the share of the channel's ten best among the search's
// twenty best.
func TestAgreement(t *testing.T) {
	hits := func(ids ...string) []retrieval.Hit {
		out := make([]retrieval.Hit, len(ids))
		for i, id := range ids {
			out[i] = retrieval.Hit{Doc: retrieval.Document{ID: id}}
		}
		return out
	}
	if a := agreement(hits("a", "b", "c", "d"), hits("b", "x", "d")); a != 0.5 {
		t.Errorf("agreement %v, want 0.5", a)
	}
	if a := agreement(nil, hits("b")); a != 0 {
		t.Errorf("no channel: agreement %v", a)
	}
	long := make([]string, 30)
	for i := range long {
		long[i] = string(rune('A' + i))
	}
	// only the search's first twenty count: the channel's "U" (21st) does not.
	if a := agreement(hits("U", "A"), hits(long...)); a != 0.5 {
		t.Errorf("agreement %v, want 0.5", a)
	}
}

// With the text channel's documents the final score is the reciprocal-rank
// fusion of the ranker's order and the channel's: a document the channel
// ranks first climbs past the ranker's second; without the channel, or at
// text_graph 0, the ranker's scores stand.
func TestFuseText(t *testing.T) {
	pool := []poolDoc{{doc: Doc{ID: "a"}}, {doc: Doc{ID: "b"}}, {doc: Doc{ID: "c"}}, {doc: Doc{ID: "d"}}}
	learned := []float64{3, 2, 1, 0} // the ranker's order: a b c d
	ch := textchan.Output{Docs: map[string]TextHit{"c": {Rank: 1}, "a": {Rank: 2}}}
	f := fusion{textGraph: 0.75, FusionOptions: fusionDefaults()}
	got := f.fuseText(ch, pool, learned)
	want := []float64{1.0/61 + 0.75/62, 1.0 / 62, 1.0/63 + 0.75/61, 1.0 / 64}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Fatalf("fused %v, want %v", got, want)
		}
	}
	if !(got[2] > got[1] && got[0] > got[2]) {
		t.Fatalf("fused order wrong: %v (want a, c, b, d)", got)
	}
	if s := f.fuseText(textchan.Output{}, pool, learned); !reflect.DeepEqual(s, learned) {
		t.Fatalf("no channel: %v, want the ranker's %v", s, learned)
	}
	f.textGraph = 0
	if s := f.fuseText(ch, pool, learned); !reflect.DeepEqual(s, learned) {
		t.Fatalf("text_graph 0: %v, want the ranker's %v", s, learned)
	}
	// Ties in the ranker's scores break by ID, as the final order does.
	f.textGraph = 1
	tied := f.fuseText(textchan.Output{Docs: map[string]TextHit{"z": {Rank: 1}}}, []poolDoc{{doc: Doc{ID: "y"}}, {doc: Doc{ID: "x"}}}, []float64{1, 1})
	if !(tied[1] > tied[0]) {
		t.Fatalf("tie not broken by ID: %v", tied)
	}
}

// Where the ranker's best is one of the KG channel's documents, the
// ranker's order is fused by rank with the channel's at kg_rank_k: the
// channel's first document climbs past the ranker's second; documents the
// channel did not reach keep only the ranker's share. Where the ranker's
// best is none of the channel's, without the channel, or at kg_rank 0, the
// ranker's scores stand.
func TestFuseKG(t *testing.T) {
	pool := []poolDoc{{doc: Doc{ID: "a"}}, {doc: Doc{ID: "b"}}, {doc: Doc{ID: "c"}}, {doc: Doc{ID: "d"}}}
	learned := []float64{3, 2, 1, 0} // the ranker's order: a b c d
	ch := kgchan.Output{Hits: []retrieval.Hit{{Doc: retrieval.Document{ID: "c"}}, {Doc: retrieval.Document{ID: "a"}}}}
	f := fusion{FusionOptions: fusionDefaults()}
	f.KGRank = 0.8
	k := float64(DefaultKGRankK)
	got := f.fuseKG(ch, pool, learned)
	want := []float64{1/(k+1) + 0.8/(k+2), 1 / (k + 2), 1/(k+3) + 0.8/(k+1), 1 / (k + 4)}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Fatalf("fused %v, want %v", got, want)
		}
	}
	if !(got[0] > got[2] && got[2] > got[1] && got[1] > got[3]) {
		t.Fatalf("fused order wrong: %v (want a, c, b, d)", got)
	}
	if s := f.fuseKG(kgchan.Output{}, pool, learned); !reflect.DeepEqual(s, learned) {
		t.Fatalf("no channel: %v, want the ranker's %v", s, learned)
	}
	// The ranker's best ("a") is none of the channel's: its scores stand.
	other := kgchan.Output{Hits: []retrieval.Hit{{Doc: retrieval.Document{ID: "c"}}, {Doc: retrieval.Document{ID: "b"}}}}
	if s := f.fuseKG(other, pool, learned); !reflect.DeepEqual(s, learned) {
		t.Fatalf("ranker's best not the channel's: %v, want the ranker's %v", s, learned)
	}
	f.KGRank = 0
	if s := f.fuseKG(ch, pool, learned); !reflect.DeepEqual(s, learned) {
		t.Fatalf("kg_rank 0: %v, want the ranker's %v", s, learned)
	}
}

// The fusion's settings are checked: a negative or oversized channel
// weight, or a constant below 1, is refused, naming the setting.
func TestFusionOptionsValidate(t *testing.T) {
	if err := fusionDefaults().validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, o := range map[string]FusionOptions{
		"kg_rank":   {RRFK: 60, KGRankK: 5, KGRank: -0.5},
		"kg_rank_k": {RRFK: 60, KGRankK: 0, KGRank: 1},
		"rrf_k":     {RRFK: 0, KGRankK: 5},
	} {
		if err := o.validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%+v: %v, want an error naming %s", o, err, name)
		}
	}
}
