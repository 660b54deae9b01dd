package weaviate

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

// TestPipelineWeaviateVsEmbedded runs the whole DMAR pipeline (defaults:
// BM25 n=100, hybrid p=20, k=5; the GNN falls back to GED, the gate is the
// fixed one) over codexm-film with the real encoder, once on Weaviate and
// once on the embedded index, and compares the final results for every kgqa
// dev question: they must be the same documents in the same order with the
// same scores (1e-4) wherever both searches returned the same candidates.
//
//	DMAR_PARITY=1 DMAR_WEAVIATE_URL=http://127.0.0.1:8080 \
//	  go test -run TestPipelineWeaviateVsEmbedded -v ./internal/retrieval/weaviate/
func TestPipelineWeaviateVsEmbedded(t *testing.T) {
	needParity(t)
	c := loadFixture(t, "codexm-film", true)
	if !c.docVecs {
		t.Skip("no real encoder vectors for codexm-film")
	}
	ctx := context.Background()
	dir, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Read(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	g := memkg.FromBundle(b)
	docs := append([]retrieval.Document(nil), c.docs...)
	for i := range docs {
		if err := corpus.Link(ctx, g, &docs[i]); err != nil {
			t.Fatal(err)
		}
	}
	mem := memindex.New(memindex.DefaultParams())
	if err := mem.Put(ctx, docs); err != nil {
		t.Fatal(err)
	}
	wv := loadParityClass(t, "codexm-film-linked", docs, false)
	rt, err := onnx.Open(onnxtest.Config())
	if err != nil {
		t.Skipf("ONNX Runtime: %v", err)
	}
	enc, err := onnx.NewEncoder(rt, onnxtest.EncoderDir())
	if err != nil {
		t.Skipf("encoder: %v", err)
	}
	defer enc.Close()
	opts := pipeline.Defaults()
	opts.Gate = "fixed"
	newP := func(x retrieval.Index) *pipeline.Pipeline {
		p, err := pipeline.New(pipeline.Config{Graph: g, Index: x, Encoder: enc, Defaults: &opts})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	pm, pw := newP(mem), newP(wv)
	same, sameCands, differ := 0, 0, 0
	var report strings.Builder
	for _, q := range c.questions {
		rm, err := pm.Retrieve(ctx, q, opts)
		if err != nil {
			t.Fatalf("embedded %q: %v", q, err)
		}
		rw, err := pw.Retrieve(ctx, q, opts)
		if err != nil {
			t.Fatalf("weaviate %q: %v", q, err)
		}
		if equalResults(rm, rw) {
			same++
		}
		// Same candidates: the same stage-1 set (which decides the anchors and
		// so the reformulated query) and the same stage-2 set for it.
		if rm.ReformulatedQuery != rw.ReformulatedQuery {
			continue
		}
		q1 := retrieval.Query{Mode: retrieval.BM25, Text: q, Limit: opts.N}
		v, err := enc.Encode(ctx, []string{rm.ReformulatedQuery})
		if err != nil {
			t.Fatal(err)
		}
		q2 := retrieval.Query{Mode: retrieval.Hybrid, Text: rm.ReformulatedQuery, Vector: v[0], Alpha: opts.Stage2Alpha, Fusion: opts.Fusion, Limit: opts.P}
		if sameSet(t, mem, wv, q1) && sameSet(t, mem, wv, q2) {
			sameCands++
			if !equalResults(rm, rw) {
				differ++
				fmt.Fprintf(&report, "%q: same candidates, different results:\n  embedded %s\n  weaviate %s\n", q, resultIDs(rm), resultIDs(rw))
			}
		}
	}
	t.Logf("codexm-film, %d questions: identical final results %d; same candidates %d, of which different results %d", len(c.questions), same, sameCands, differ)
	if differ > 0 {
		t.Errorf("final results differ although the searches agree:\n%s", report.String())
	}
}

func resultIDs(r *pipeline.Result) string {
	var s []string
	for _, d := range r.Results {
		s = append(s, fmt.Sprintf("%s %.4f", d.ID, d.Score))
	}
	return strings.Join(s, ", ")
}

func equalResults(a, b *pipeline.Result) bool {
	if len(a.Results) != len(b.Results) {
		return false
	}
	for i := range a.Results {
		if a.Results[i].ID != b.Results[i].ID || math.Abs(a.Results[i].Score-b.Results[i].Score) > 1e-4 {
			return false
		}
	}
	return true
}

// sameSet reports whether both indexes return the same documents for q.
func sameSet(t *testing.T, a, b retrieval.Index, q retrieval.Query) bool {
	t.Helper()
	ha, err := a.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := b.Search(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return len(ha) == len(hb) && overlap(ha, hb) == 1
}
