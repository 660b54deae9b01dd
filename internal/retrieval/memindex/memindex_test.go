package memindex

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/retrievaltest"
)

func TestConformance(t *testing.T) {
	retrievaltest.Run(t, func(t *testing.T) retrievaltest.Backend { return New(DefaultParams()) })
}

func TestConformanceAfterSaveLoad(t *testing.T) {
	retrievaltest.Run(t, func(t *testing.T) retrievaltest.Backend {
		return &reloading{Index: New(DefaultParams()), dir: t.TempDir()}
	})
}

// reloading saves and reloads the index after every Put.
type reloading struct {
	*Index
	dir string
}

func (r *reloading) Put(ctx context.Context, docs []retrieval.Document) error {
	if err := r.Index.Put(ctx, docs); err != nil {
		return err
	}
	p := filepath.Join(r.dir, "idx.gob")
	if err := r.Index.Save(p); err != nil {
		return err
	}
	x, err := Load(p, DefaultParams())
	if err != nil {
		return err
	}
	r.Index = x
	return nil
}

// TestBM25HandComputed checks scores against values worked out by hand.
func TestBM25HandComputed(t *testing.T) {
	x := New(DefaultParams())
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

func TestFuseRelativeScore(t *testing.T) {
	lex := []scoredDoc{{doc: 0, score: 10}, {doc: 1, score: 5}, {doc: 2, score: 0}}
	vec := []scoredDoc{{doc: 2, score: 0.9}, {doc: 0, score: 0.5}}
	got := map[int32]float64{}
	for _, s := range Fuse(retrieval.RelativeScore, 0.25, lex, vec) {
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
	for _, s := range Fuse(retrieval.RankedFusion, 0.5, lex, vec) {
		rf[s.doc] = s.score
	}
	if w := 0.5/60 + 0.5/61; math.Abs(rf[0]-w) > 1e-12 {
		t.Errorf("rankedFusion[0] = %v, want %v", rf[0], w)
	}
}
