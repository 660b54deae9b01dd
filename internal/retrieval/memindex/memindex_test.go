package memindex

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/retrievaltest"
)

func TestConformance(t *testing.T) {
	retrievaltest.Run(t, func(_ *testing.T) retrievaltest.Backend { return New(DefaultParams()) })
}

func TestConformanceAfterSaveLoad(t *testing.T) {
	retrievaltest.Run(t, func(t *testing.T) retrievaltest.Backend {
		return &reloading{Index: New(DefaultParams()), dir: t.TempDir(), params: DefaultParams()}
	})
}

// reloading saves and reloads the index after every Put.
type reloading struct {
	*Index
	dir    string
	params Params // of the index loaded
}

func (r *reloading) Put(ctx context.Context, docs []retrieval.Document) error {
	if err := r.Index.Put(ctx, docs); err != nil {
		return err
	}
	p := filepath.Join(r.dir, "idx.gob")
	if err := r.Save(p); err != nil {
		return err
	}
	x, err := Load(p, r.params)
	if err != nil {
		return err
	}
	if err := r.Close(); err != nil {
		return err
	}
	r.Index = x
	return nil
}

// TestBM25HandComputed checks classic BM25 scores against values worked out
// by hand.
func TestBM25HandComputed(t *testing.T) {
	p := DefaultParams()
	p.Classic, p.WeaviateTopK = true, false
	x := New(p)
	docs := []retrieval.Document{
		{ID: "a", Title: "", Text: "cat cat dog"},      // len 3
		{ID: "b", Title: "", Text: "cat bird"},         // len 2
		{ID: "c", Title: "", Text: "fish fish fish x"}, // len 4
	}
	if err := x.Put(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	hs, err := x.Search(context.Background(), retrieval.Query{Mode: retrieval.BM25, Text: "the cat", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	// N=3, n(cat)=2: idf = ln(1 + (3-2+0.5)/(2+0.5)) = ln(1.6); avgdl = 3.
	idf := math.Log(1.6)
	// a: tf=2, |D|=3: 2*2.2/(2+1.2*(1-0.75+0.75*3/3)) = 4.4/3.2
	// b: tf=1, |D|=2: 1*2.2/(1+1.2*(0.25+0.75*2/3)) = 2.2/1.9
	want := map[string]float64{"a": idf * 4.4 / 3.2, "b": idf * 2.2 / 1.9}
	if len(hs) != 2 {
		t.Fatalf("got %d hits, want 2", len(hs))
	}
	for _, h := range hs {
		if math.Abs(h.Score-want[h.Doc.ID]) > 1e-9 {
			t.Errorf("bm25(%s) = %.9f, want %.9f", h.Doc.ID, h.Score, want[h.Doc.ID])
		}
	}
	if hs[0].Doc.ID != "a" {
		t.Errorf("a must outrank b")
	}
}

// TestBM25WeaviateHandComputed checks the default, Weaviate-faithful BM25
// against values worked out by hand from Weaviate 1.35's formula (bm25.go).
func TestBM25WeaviateHandComputed(t *testing.T) {
	k1 := float64(float32(1.2))
	f := func(tf, length, avg float64) float64 { return tf / (tf + k1*(0.25+0.75*length/avg)) }
	tests := []struct {
		name  string
		docs  []retrieval.Document
		query string
		want  map[string]float64
	}{{
		name: "text only",
		docs: []retrieval.Document{
			{ID: "a", Text: "cat cat dog"},      // 3 tokens, 2 distinct
			{ID: "b", Text: "cat bird"},         // 2 tokens, 2 distinct
			{ID: "c", Text: "fish fish fish x"}, // 4 tokens, 2 distinct
		},
		query: "the cat",
		// text avg = (3+2+4)/3 = 3 (no title has tokens);
		// n(cat) = (0 + 2)/1 = 2: idf = ln(1 + 1.5/2.5) = ln 1.6.
		want: map[string]float64{"a": math.Log(1.6) * f(2, 3, 3), "b": math.Log(1.6) * f(1, 2, 3)},
	}, {
		name: "title and text",
		docs: []retrieval.Document{
			{ID: "a", Title: "Cat", Text: "cat dog"},
			{ID: "b", Title: "Bird", Text: "cat"},
			{ID: "c", Title: "Fish", Text: "fish"},
		},
		query: "cat CAT",
		// title avg 1, text avg (2+1+1)/3; n(cat) = ⌊(1 + 2)/2⌋ = 1:
		// idf = ln(1 + 2.5/1.5), doubled because the query says cat twice.
		want: func() map[string]float64 {
			title, text := 1.0, 4.0/3
			idf := 2 * math.Log(1+2.5/1.5)
			return map[string]float64{
				"a": float64(float32(idf*f(1, 1, title)) + float32(idf*f(1, 2, text))),
				"b": float64(float32(idf * f(1, 1, text))),
			}
		}(),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := New(DefaultParams())
			if err := x.Put(context.Background(), tt.docs); err != nil {
				t.Fatal(err)
			}
			hs, err := x.Search(context.Background(), retrieval.Query{Mode: retrieval.BM25, Text: tt.query, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(hs) != len(tt.want) {
				t.Fatalf("got %d hits, want %d", len(hs), len(tt.want))
			}
			for _, h := range hs {
				if w := tt.want[h.Doc.ID]; math.Abs(h.Score-w) > 1e-6*w {
					t.Errorf("bm25(%s) = %.9f, want %.9f", h.Doc.ID, h.Score, w)
				}
			}
		})
	}
}

// TestWeaviateTopK checks the copy of Weaviate's per-field candidate cut:
// with limit 1 each field keeps max(⌊1.1·9⌋, 9+10) = 19 documents (L = 1 +
// WeaviateTieSlack). 30 documents have "cat" once in a two-word title; the
// one with the longest text has "cat" in its text too but, loaded last, is
// outside the title's 19 (a tie, broken by load order), so it keeps only its
// text score and cannot top the ranking as it does without the cut.
func TestWeaviateTopK(t *testing.T) {
	var docs []retrieval.Document
	for i := 0; i < 30; i++ {
		docs = append(docs, retrieval.Document{ID: fmt.Sprintf("d%02d", i), Title: "cat dog", Text: "bird fish"})
	}
	docs[29].Text = "cat fish"
	q := retrieval.Query{Mode: retrieval.BM25, Text: "cat", Limit: 1}
	for _, c := range []struct {
		cut  bool
		want string
	}{{false, "d29"}, {true, "d00"}} {
		p := DefaultParams()
		p.WeaviateTopK = c.cut
		x := New(p)
		if err := x.Put(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
		hs, err := x.Search(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if len(hs) != 1 || hs[0].Doc.ID != c.want {
			t.Errorf("WeaviateTopK=%v: top %v, want %s", c.cut, hs, c.want)
		}
	}
}

func TestTokensAsWeaviate(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Nolan's 2010 film, Inception!", []string{"nolan", "s", "2010", "film", "inception"}},
		{"E=mc² ½ Ⅻ", []string{"e", "mc²", "½", "ⅻ"}},
		{"İstanbul-Ankara", []string{"istanbul", "ankara"}},
	}
	for _, tt := range tests {
		got := Tokens(tt.in)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFuseRelativeScore(t *testing.T) {
	lex := []scoredDoc{{doc: 0, score: 10}, {doc: 1, score: 5}, {doc: 2, score: 0}}
	vec := []scoredDoc{{doc: 2, score: 0.9}, {doc: 0, score: 0.5}}
	got := map[int32]float64{}
	for _, s := range fuse(retrieval.RelativeScore, 0.25, DefaultRankedFusionK, lex, vec) {
		got[s.doc] = s.score
	}
	// lex normalised: 1, 0.5, 0; vec normalised: doc2 1, doc0 0.
	want := map[int32]float64{0: 0.75*1 + 0.25*0, 1: 0.75 * 0.5, 2: 0.75*0 + 0.25*1}
	for d, w := range want {
		if math.Abs(got[d]-w) > 1e-12 {
			t.Errorf("fused[%d] = %v, want %v", d, got[d], w)
		}
	}
	rf := map[int32]float64{}
	for _, s := range fuse(retrieval.RankedFusion, 0.5, DefaultRankedFusionK, lex, vec) {
		rf[s.doc] = s.score
	}
	if w := 0.5/60 + 0.5/61; math.Abs(rf[0]-w) > 1e-12 {
		t.Errorf("rankedFusion[0] = %v, want %v", rf[0], w)
	}
	rf10 := map[int32]float64{}
	for _, s := range fuse(retrieval.RankedFusion, 0.5, 10, lex, vec) {
		rf10[s.doc] = s.score
	}
	if w := 0.5/10 + 0.5/11; math.Abs(rf10[0]-w) > 1e-12 {
		t.Errorf("rankedFusion k=10 [0] = %v, want %v", rf10[0], w)
	}
}

func TestRankedFusionKDefault(t *testing.T) {
	if k := DefaultParams().RankedFusionK; k != 60 {
		t.Fatalf("DefaultParams().RankedFusionK = %d, want Weaviate's 60", k)
	}
	if k := (Params{}).rankedFusionK(); k != DefaultRankedFusionK {
		t.Fatalf("unset RankedFusionK = %d, want %d", k, DefaultRankedFusionK)
	}
	if k := (Params{RankedFusionK: 20}).rankedFusionK(); k != 20 {
		t.Fatalf("RankedFusionK 20 = %d", k)
	}
}

// TestExplanations pins the explanation of each search mode: they are
// formatted only for returned hits, from the parts kept while scoring.
func TestExplanations(t *testing.T) {
	x := New(DefaultParams())
	docs := []retrieval.Document{
		{ID: "d1", Title: "Inception", Text: "a film directed by Nolan", Vector: []float32{1, 0}},
		{ID: "d2", Title: "Memento", Text: "another Nolan film", Vector: []float32{0.6, 0.8}},
	}
	if err := x.Put(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	search := func(q retrieval.Query) []retrieval.Hit {
		t.Helper()
		hits, err := x.Search(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	lex := search(retrieval.Query{Mode: retrieval.BM25, Text: "Nolan film", Limit: 2})
	if len(lex) != 2 {
		t.Fatalf("bm25 hits %v", lex)
	}
	for _, h := range lex {
		// One part per field and term that matched, in term order.
		if !strings.HasPrefix(h.Explain, "bm25 text:nolan=") || !strings.Contains(h.Explain, " text:film=") || strings.Count(h.Explain, "=") != 2 {
			t.Errorf("%s: %q", h.Doc.ID, h.Explain)
		}
	}
	vec := search(retrieval.Query{Mode: retrieval.Vector, Vector: []float32{0, 2}, Limit: 2})
	if len(vec) != 2 || vec[0].Doc.ID != "d2" || vec[0].Explain != "cosine 0.8000" || vec[1].Explain != "cosine 0.0000" {
		t.Errorf("vector hits %+v", vec)
	}
	hy := search(retrieval.Query{Mode: retrieval.Hybrid, Text: "Inception", Vector: []float32{1, 0}, Alpha: 0.5, Fusion: retrieval.RelativeScore, Limit: 1})
	if len(hy) != 1 || !strings.HasPrefix(hy[0].Explain, "hybrid relativeScore alpha=0.50: bm25 ") || !strings.Contains(hy[0].Explain, "; vector 1.0000 (rank 1)") {
		t.Errorf("hybrid hits %+v", hy)
	}
}
