package onnx_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/testfile"
	"github.com/dmar-kg/dmar/internal/vec"
)

var extraEncoders = []string{"bge-small-en-v1.5", "bge-small-en-v1.5-int8", "e5-small-v2-int8"}

// registryEncoder opens the registry encoder name from the cache, or skips
// (fails under CI=true) when setup has not fetched it.
func registryEncoder(tb testing.TB, name string, opts ...onnx.EncoderOption) *onnx.Encoder {
	tb.Helper()
	dir := filepath.Join(onnxtest.CacheDir(), "models", name)
	onnxtest.NeedFile(tb, filepath.Join(dir, "manifest.json"), "encoder "+name+" (DMAR_ENCODERS=all scripts/setup.sh)")
	rt := onnxtest.Runtime(tb)
	e, err := onnx.NewEncoder(rt, dir, append([]onnx.EncoderOption{onnx.WithEncoderName(name)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

func TestRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range onnx.Encoders() {
		s, err := onnx.LookupEncoder(name)
		if err != nil || s.Name != name {
			t.Fatalf("%s: %+v %v", name, s, err)
		}
		seen[name] = true
	}
	for _, name := range append([]string{onnx.MiniLMName}, extraEncoders...) {
		if !seen[name] {
			t.Errorf("%s is not in the registry", name)
		}
	}
	if !slices.Equal(onnx.Encoders(), config.EncoderNames) {
		t.Errorf("registry %v, config.EncoderNames %v", onnx.Encoders(), config.EncoderNames)
	}
	if _, err := onnx.LookupEncoder("nope"); err == nil || !strings.Contains(err.Error(), "bge-small-en-v1.5") {
		t.Errorf("unknown name: %v", err)
	}
}

// The default's passage view is the encoder itself: documents are embedded
// as before, under the same version (the index snapshot key).
func TestDefaultPassageIsUnchanged(t *testing.T) {
	e := testEncoder(t)
	if e.Passage() != e || e.Truncated(128).Passage().Version() != e.Truncated(128).Version() {
		t.Fatal("all-MiniLM-L6-v2's passage view differs from the encoder")
	}
	if e.Version() != "sentence-transformers/all-MiniLM-L6-v2" {
		t.Errorf("version %q changed", e.Version())
	}
}

// Every registry entry has its own version, and so its own snapshot key.
func TestRegistryVersionsDiffer(t *testing.T) {
	versions := map[string]string{testEncoder(t).Version(): onnx.MiniLMName}
	for _, name := range extraEncoders {
		e := registryEncoder(t, name)
		for _, v := range []string{e.Version(), e.Passage().Version()} {
			if other, dup := versions[v]; dup && other != name {
				t.Errorf("%s and %s share version %q", name, other, v)
			}
			versions[v] = name
		}
		if !strings.HasPrefix(e.Version(), name+"#") {
			t.Errorf("%s: version %q", name, e.Version())
		}
	}
}

// testdata/registry_reference.json: embeddings by the Python reference
// pipeline (models/encoder/reference_registry.py), one text per call.
// Queries at 512 positions with the query prefix, passages at 128 with the
// passage prefix. fp32: Go batches with padding, within 1e-4. The int8
// graphs quantise activations dynamically, with one scale per tensor over
// the whole batch, so a text's vector depends on its batch neighbours: one
// text per call they match the reference within 1e-4; batched (padding and
// neighbours) within cosine 0.99.
func TestRegistryMatchesReference(t *testing.T) {
	var fix struct {
		PassageMaxLen int `json:"passage_max_len"`
		Encoders      map[string]struct {
			Items []struct {
				onnxtest.Item
				Kind   string `json:"kind"`
				Vector string `json:"vector"`
			} `json:"items"`
		} `json:"encoders"`
	}
	onnxtest.ReadFixture(t, "testdata/registry_reference.json", &fix)
	for _, name := range extraEncoders {
		t.Run(name, func(t *testing.T) {
			ref, ok := fix.Encoders[name]
			if !ok {
				t.Fatalf("no reference for %s", name)
			}
			texts := onnxtest.TextsOf(t, ref.Items)
			var qs, ps []string
			var qi, pi []int
			for i, it := range ref.Items {
				if it.Kind == "query" {
					qs, qi = append(qs, texts[i]), append(qi, i)
				} else {
					ps, pi = append(ps, texts[i]), append(pi, i)
				}
			}
			batches := []int{32}
			if strings.HasSuffix(name, "-int8") {
				batches = []int{1, 32}
			}
			for _, batch := range batches {
				e := registryEncoder(t, name, onnx.WithBatchSize(batch))
				ctx := context.Background()
				qv, err := e.Encode(ctx, qs)
				if err != nil {
					t.Fatal(err)
				}
				pv, err := e.Truncated(fix.PassageMaxLen).Passage().Encode(ctx, ps)
				if err != nil {
					t.Fatal(err)
				}
				got := make([][]float32, len(ref.Items))
				for j, i := range qi {
					got[i] = qv[j]
				}
				for j, i := range pi {
					got[i] = pv[j]
				}
				maxDiff, minCos := 0.0, 1.0
				for i, it := range ref.Items {
					want := decodeVector(t, it.Vector)
					if len(want) != len(got[i]) {
						t.Fatalf("%s: %d dims, want %d", it.Label(), len(got[i]), len(want))
					}
					for k := range want {
						maxDiff = math.Max(maxDiff, math.Abs(float64(want[k]-got[i][k])))
					}
					minCos = math.Min(minCos, vec.Cosine64(want, got[i]))
				}
				t.Logf("%s batch %d: %d texts, max abs diff %.2g, min cosine %.7f", name, batch, len(ref.Items), maxDiff, minCos)
				if batch == 1 || !strings.HasSuffix(name, "-int8") {
					if maxDiff > 1e-4 {
						t.Errorf("batch %d: max abs diff %.3g > 1e-4", batch, maxDiff)
					}
				} else if minCos < 0.99 {
					t.Errorf("batch %d: min cosine %.4f < 0.99", batch, minCos)
				}
			}
		})
	}
}

func decodeVector(tb testing.TB, s string) []float32 {
	tb.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		tb.Fatalf("bad vector: %v", err)
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// bge-small-en-v1.5-int8 stays within cosine 0.99 of the fp32 model on the
// ~300 real texts of the tokenizer fixture (questions as queries at 512,
// extracts as passages at 128).
func TestInt8CloseToFP32(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two models over 300 texts")
	}
	data := testfile.Read(t, "../wordpiece/testdata/registry_tokens.json")
	var fix struct {
		Items []onnxtest.Item `json:"items"`
	}
	if err := json.Unmarshal(data, &fix); err != nil {
		t.Fatal(err)
	}
	var items []onnxtest.Item
	seen := map[string]bool{}
	for _, it := range fix.Items {
		if it.Text != nil || seen[it.Label()] {
			continue
		}
		seen[it.Label()] = true
		items = append(items, it)
	}
	fp, q := registryEncoder(t, "bge-small-en-v1.5"), registryEncoder(t, "bge-small-en-v1.5-int8")
	texts := onnxtest.Texts(t, items)
	var qs, ps []string
	for i, it := range items {
		if it.Field == "text" {
			ps = append(ps, texts[i])
		} else {
			qs = append(qs, texts[i])
		}
	}
	ctx := context.Background()
	minCos, sum, n := 1.0, 0.0, 0
	for _, side := range []struct {
		texts []string
		view  func(*onnx.Encoder) *onnx.Encoder
	}{
		{qs, func(e *onnx.Encoder) *onnx.Encoder { return e }},
		{ps, func(e *onnx.Encoder) *onnx.Encoder { return e.Truncated(128).Passage() }},
	} {
		a, err := side.view(fp).Encode(ctx, side.texts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := side.view(q).Encode(ctx, side.texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range a {
			c := vec.Cosine64(a[i], b[i])
			minCos, sum, n = math.Min(minCos, c), sum+c, n+1
		}
	}
	t.Logf("int8 vs fp32 bge-small-en-v1.5 on %d texts (%d queries, %d passages): min cosine %.4f, mean %.4f", n, len(qs), len(ps), minCos, sum/float64(n))
	if n < 250 || minCos < 0.99 {
		t.Errorf("%d texts, min cosine %.4f: want >= 250 texts and >= 0.99", n, minCos)
	}
}

// codexmDocuments reads the first n codexm documents as the index embeds
// them (corpus.EncodeText: title ". " text).
func codexmDocuments(tb testing.TB, n int) []string {
	return datasetTexts(tb, "codexm", "corpus.jsonl", n, func(r textRecord) string {
		if r.Title != "" {
			return r.Title + ". " + r.Text
		}
		return r.Text
	})
}

// BenchmarkRegistryDocuments is the load-time cost of each encoder side by
// side: the first 500 codexm documents as passages at doc_tokens 128, 32 per
// call, and for the int8 encoders also one per call (where their vectors do
// not depend on their batch neighbours; docs/onnx.md):
//
//	DMAR_ORT_THREADS=2 go test -run '^$' -bench RegistryDocuments -benchtime 1x ./internal/scoring/onnx/
func BenchmarkRegistryDocuments(b *testing.B) {
	docs := codexmDocuments(b, 500)
	for _, name := range append([]string{onnx.MiniLMName}, extraEncoders...) {
		batches := []int{32}
		if strings.HasSuffix(name, "-int8") {
			batches = append(batches, 1)
		}
		for _, batch := range batches {
			b.Run(fmt.Sprintf("%s/batch=%d", name, batch), func(b *testing.B) {
				var e *onnx.Encoder
				if name == onnx.MiniLMName {
					e = testEncoder(b, onnx.WithBatchSize(batch))
				} else {
					e = registryEncoder(b, name, onnx.WithBatchSize(batch))
				}
				d := e.Truncated(128).Passage()
				ctx := context.Background()
				if _, err := d.Encode(ctx, docs[:32]); err != nil { // warm-up
					b.Fatal(err)
				}
				b.ResetTimer()
				n := 0
				for b.Loop() {
					if _, err := d.Encode(ctx, docs); err != nil {
						b.Fatal(err)
					}
					n += len(docs)
				}
				b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "docs/s")
			})
		}
	}
}

// The int8 models quantize activations over their whole input, so a text's
// vector depends on what shares its call. Documents (the passage view) run
// one text per call: a document's vector is the same alone, in a batch and
// through the concurrent corpus path. Queries keep a request's own texts
// in one call, and the server's micro-batcher (PerCaller) gives each caller
// a call of its own: concurrent requests get exactly the vectors they get
// alone. Without PerCaller they would not (checked at the end, so that the
// test cannot pass on a model whose vectors ignore their company anyway).
func TestPerTextEncodersIgnoreTheirCompany(t *testing.T) {
	ctx := context.Background()
	texts := []string{
		"Who wrote the screenplay of Pulp Fiction?",
		"Which actors played in films directed by Steven Spielberg, and in which of them did Tom Hanks appear as the lead?",
		"Paris",
		"The Dark Knight is a 2008 superhero film directed by Christopher Nolan from a screenplay he co-wrote with his brother Jonathan.",
	}
	for _, name := range []string{"bge-small-en-v1.5-int8", "e5-small-v2-int8"} {
		t.Run(name, func(t *testing.T) {
			onnxtest.NeedEncoders(t, name)
			rt := onnxtest.Runtime(t)
			e, err := onnx.NewEncoder(rt, filepath.Join(onnxtest.CacheDir(), "models", name), onnx.WithEncoderName(name))
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if !e.Spec().PerText || !strings.HasSuffix(e.Version(), ".t1") {
				t.Fatalf("%s: PerText %v, version %s", name, e.Spec().PerText, e.Version())
			}
			p := e.Passage()
			together, err := p.Encode(ctx, texts)
			if err != nil {
				t.Fatal(err)
			}
			undo := onnx.SetCorpusWindow(2, 2) // the concurrent corpus path, windows of two texts
			corpus, err := p.EncodeCorpus(ctx, texts, nil)
			undo()
			if err != nil {
				t.Fatal(err)
			}
			alone := make([][]float32, len(texts))
			for i, s := range texts {
				a, err := p.Encode(ctx, []string{s})
				if err != nil {
					t.Fatal(err)
				}
				alone[i] = a[0]
				if d := maxAbsDiff(a[0], together[i]); d != 0 {
					t.Errorf("document %d: alone and in a batch differ by %g", i, d)
				}
				if d := maxAbsDiff(a[0], corpus[i]); d != 0 {
					t.Errorf("document %d: alone and through the corpus path differ by %g", i, d)
				}
			}
			// Queries: four callers at once through the micro-batcher.
			concurrent := func(perCaller bool) [][]float32 {
				b := scoring.Batched(e, scoring.BatchConfig{Window: 50 * time.Millisecond, MaxBatch: 32, PerCaller: perCaller})
				out := make([][]float32, len(texts))
				var wg sync.WaitGroup
				for i, s := range texts {
					wg.Add(1)
					go func() {
						defer wg.Done()
						v, err := b.Encode(ctx, []string{s})
						if err != nil {
							t.Error(err)
							return
						}
						out[i] = v[0]
					}()
				}
				wg.Wait()
				return out
			}
			got := concurrent(true)
			differ := 0
			for i, s := range texts {
				a, err := e.Encode(ctx, []string{s})
				if err != nil {
					t.Fatal(err)
				}
				if d := maxAbsDiff(a[0], got[i]); d != 0 {
					t.Errorf("query %d: alone and among concurrent callers differ by %g", i, d)
				}
				if maxAbsDiff(a[0], concurrent(false)[i]) != 0 {
					differ++
				}
			}
			if differ == 0 {
				t.Errorf("merged into one call the queries' vectors did not change: the test shows nothing")
			}
		})
	}
}

func maxAbsDiff(a, b []float32) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}
