package eval

import (
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
)

// wordEncoder embeds a text as counts of a few words: enough for vector
// search to prefer the document sharing the question's words.
type wordEncoder struct{}

var vocab = []string{"inception", "nolan", "following", "memento", "tenet", "film"}

func (wordEncoder) Encode(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, len(vocab))
		for j, w := range vocab {
			v[j] = float32(strings.Count(strings.ToLower(t), w)) + 0.01
		}
		out[i] = v
	}
	return out, nil
}
func (wordEncoder) Dim() int        { return len(vocab) }
func (wordEncoder) Version() string { return "words" }

// fakeDMAR answers from the index with BM25 and reports a fallback, as the
// pipeline does when no GNN is configured.
type fakeDMAR struct {
	x    retrieval.Index
	seen []pipeline.Options
}

func (f *fakeDMAR) Retrieve(ctx context.Context, q string, o pipeline.Options) (*pipeline.Result, error) {
	f.seen = append(f.seen, o)
	hits, err := f.x.Search(ctx, retrieval.Query{Mode: retrieval.BM25, Text: q, Limit: o.K, Filter: o.Filter})
	if err != nil {
		return nil, err
	}
	res := &pipeline.Result{Query: q, ReformulatedQuery: q + " nolan", Reformulator: "builtin",
		Fallbacks: []pipeline.Fallback{{Name: "gnn_unavailable"}}, TimingsMS: map[string]float64{"recall": 1, "rerank": 2, "total": 3}}
	for i := len(hits) - 1; i >= 0; i-- { // reversed, so that dmar differs from bm25
		h := hits[i]
		res.Results = append(res.Results, pipeline.Doc{ID: h.Doc.ID, Title: h.Doc.Title, Text: h.Doc.Text, Score: float64(i), Breakdown: pipeline.Breakdown{Stage: "second"}})
	}
	if len(hits) > 0 {
		res.Anchors = []pipeline.Anchor{{Doc: pipeline.Doc{ID: hits[0].Doc.ID, Title: hits[0].Doc.Title}}}
	}
	return res, nil
}

func testIndex(t *testing.T, ds *Dataset) *memindex.Index {
	t.Helper()
	x := memindex.New(memindex.DefaultParams())
	docs := append([]retrieval.Document(nil), ds.Corpus...)
	vecs, _ := wordEncoder{}.Encode(context.Background(), func() []string {
		var s []string
		for _, d := range docs {
			s = append(s, d.Title+" "+d.Text)
		}
		return s
	}())
	for i := range docs {
		docs[i].Vector = vecs[i]
	}
	if err := x.Put(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	return x
}

func TestRunWriteReport(t *testing.T) {
	ds, err := Open("hotpotqa:testdata/hotpot", 0)
	if err != nil {
		t.Fatal(err)
	}
	x := testIndex(t, ds)
	dm := &fakeDMAR{x: x}
	systems, err := Systems([]string{"bm25", "dense", "hybrid", "dmar", "dmar-m1", "dmar-mc50"}, pipeline.Defaults(), 3, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := Run(context.Background(), Config{Pipeline: dm, Index: x, Encoder: wordEncoder{}, KMax: 3}, ds, systems)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(ds.Questions)*len(systems) {
		t.Fatalf("%d records, want one per question and system", len(recs))
	}
	if dm.seen[1].M != 1 || dm.seen[2].Shapley != "montecarlo" || dm.seen[2].Samples != 50 || dm.seen[0].K != 3 {
		t.Errorf("ablation options not passed: %+v", dm.seen[:3])
	}
	for _, r := range recs {
		if r.Error != "" || len(r.RankedIDs) == 0 {
			t.Errorf("%s/%s: error %q, ranked %v", r.ID, r.System, r.Error, r.RankedIDs)
		}
		// Recompute a metric from the record alone, as an outside check would.
		if got := RecallAt(r.RankedIDs, r.Gold, 3); got != r.Metrics["recall@3"] {
			t.Errorf("%s/%s: recall@3 %v, recomputed %v", r.ID, r.System, r.Metrics["recall@3"], got)
		}
	}
	// Comparison question h2 answers "yes": no answer recall for it.
	for _, r := range recs {
		if _, ok := r.Metrics["answer_recall@3"]; ok == (r.ID == "h2") {
			t.Errorf("%s/%s: answer recall present=%v", r.ID, r.System, ok)
		}
	}

	s := Summarize(ds, systems, recs, 3, 200, 1)
	if s.BestBaseline["recall@3"] == "" || s.Diffs["dmar"]["recall@3"].N != 2 {
		t.Errorf("best baseline %q, dmar diff %+v", s.BestBaseline["recall@3"], s.Diffs["dmar"]["recall@3"])
	}
	if s.Fallbacks["dmar"]["gnn_unavailable"] != 2 || s.Stages["dmar"]["rerank"].P50 != 2 {
		t.Errorf("fallbacks %v, stages %v", s.Fallbacks["dmar"], s.Stages["dmar"])
	}
	if len(s.RecallCurve["bm25"]) != 3 || s.Strata["type"]["bridge"].N != 1 {
		t.Errorf("curve %v, strata %v", s.RecallCurve["bm25"], s.Strata)
	}

	dir := t.TempDir()
	if err := Write(dir, s, recs); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"report.md", "results.json", "per_question.jsonl", "recall_at_k.png", "latency.png", "ablation_deltas.png"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.HasSuffix(name, ".png") {
			f, _ := os.Open(filepath.Join(dir, name))
			img, err := png.Decode(f)
			f.Close()
			if err != nil {
				t.Fatalf("%s is not a valid PNG: %v", name, err)
			}
			if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
				t.Errorf("%s is %v", name, b)
			}
		}
	}
	var res Summary
	b, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	if err := json.Unmarshal(b, &res); err != nil || res.Dataset.Questions != 2 {
		t.Fatalf("results.json: %v, %+v", err, res.Dataset)
	}
	lines := strings.Split(strings.TrimSpace(string(mustRead(t, filepath.Join(dir, "per_question.jsonl")))), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("%d lines in per_question.jsonl", len(lines))
	}
	var first struct {
		ID        string   `json:"id"`
		System    string   `json:"system"`
		RankedIDs []string `json:"ranked_ids"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.ID != "h1" || first.System != "bm25" || len(first.RankedIDs) == 0 {
		t.Errorf("first line %q: %v", lines[0], err)
	}
	report := string(mustRead(t, filepath.Join(dir, "report.md")))
	for _, want := range []string{"## Retrieval quality", "| dmar-m1 |", "paired bootstrap", "### type", "gnn_unavailable 2", "recall_at_k.png", "EM, F1 and label accuracy are not measured"} {
		if !strings.Contains(report, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

func TestRunDistractorRestrictsToPool(t *testing.T) {
	ds, err := Open("hotpotqa-distractor:testdata/hotpot", 0)
	if err != nil {
		t.Fatal(err)
	}
	x := testIndex(t, ds)
	systems, _ := Systems([]string{"bm25", "dense", "hybrid", "dmar"}, pipeline.Defaults(), 5, 0.5)
	recs, err := Run(context.Background(), Config{Pipeline: &fakeDMAR{x: x}, Index: x, Encoder: wordEncoder{}, KMax: 5}, ds, systems)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.ID == "h2" && len(r.RankedIDs) > 2 {
			t.Errorf("%s: h2 has 2 paragraphs, got %v", r.System, r.RankedIDs)
		}
	}
}

func TestSystemsUnknown(t *testing.T) {
	if _, err := Systems([]string{"bm25", "colbert"}, pipeline.Defaults(), 20, 0.5); err == nil || !strings.Contains(err.Error(), "colbert") {
		t.Errorf("got %v", err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
