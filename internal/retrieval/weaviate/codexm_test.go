package weaviate

import (
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/dmar-kg/dmar/internal/bench"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

// codexm is a real-data fixture of the parity report and the benchmarks: a
// corpus (codexm, or codexm-film), the kgqa dev questions, and — when the
// sentence encoder is installed (scripts/setup.sh) — the real
// all-MiniLM-L6-v2 vectors of both (documents as corpus.EncodeText sees
// them). Vectors are cached in $DMAR_CACHE/parity, keyed by encoder and
// corpus; without the encoder there are no vectors at all (never made-up
// ones). Encoding all of codexm takes long on a small machine, so its
// document vectors are computed only with DMAR_PARITY_ENCODE=1 (or taken
// from the cache).
type codexm struct {
	name      string
	docs      []retrieval.Document
	questions []string
	qvecs     [][]float32 // real question vectors; nil without the encoder
	docVecs   bool        // documents carry real encoder vectors
	encoder   string      // encoder name, "" without
}

var (
	fixtureMu sync.Mutex
	fixtures  = map[string]*codexm{}
)

// loadCodexm returns the full codexm fixture.
func loadCodexm(tb testing.TB) *codexm {
	return loadFixture(tb, "codexm", os.Getenv("DMAR_PARITY_ENCODE") == "1")
}

// loadFixture reads dataset's corpus (and vectors: cached, or encoded when
// encode is set).
func loadFixture(tb testing.TB, dataset string, encode bool) *codexm {
	tb.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if c, ok := fixtures[dataset]; ok {
		return c
	}
	c, err := readFixture(tb, dataset, encode)
	if err != nil {
		tb.Skipf("%s fixture: %v", dataset, err)
	}
	fixtures[dataset] = c
	return c
}

func readFixture(tb testing.TB, dataset string, encode bool) (*codexm, error) {
	ctx := context.Background()
	dir, err := datapath.Dataset(dataset)
	if err != nil {
		return nil, err
	}
	docs, st, err := corpus.ReadFile(ctx, filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		return nil, err
	}
	if st.Bad > 0 || st.Duplicate > 0 {
		tb.Logf("codexm corpus: %d bad, %d duplicate lines skipped: %v", st.Bad, st.Duplicate, st.Problems)
	}
	qdir, err := datapath.Dataset("kgqa")
	if err != nil {
		return nil, err
	}
	qs, err := bench.ReadQuestions(filepath.Join(qdir, "dev.jsonl"), 0) // the question text only: the rest is gold
	if err != nil {
		return nil, err
	}
	c := &codexm{name: dataset, docs: docs, questions: qs}
	if err := c.attachVectors(ctx, tb, encode); err != nil {
		tb.Logf("%s: %v", dataset, err)
	}
	return c, nil
}

type vectorCache struct {
	Encoder string
	IDs     []string // document ids or question texts
	Vecs    [][]float32
}

// attachVectors sets the real question vectors whenever the encoder is
// installed, and the documents' when they are cached or encode is set.
func (c *codexm) attachVectors(ctx context.Context, tb testing.TB, encode bool) error {
	dir := onnxtest.EncoderDir()
	var m struct {
		Name string `json:"name"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return fmt.Errorf("encoder not installed (%v); run scripts/setup.sh", err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("encoder manifest: %w", err)
	}
	cache := filepath.Join(onnxtest.CacheDir(), "parity")
	model := filepath.Base(m.Name)
	var enc *onnx.Encoder
	encoder := func() (*onnx.Encoder, error) {
		if enc != nil {
			return enc, nil
		}
		rt, err := onnx.Open(onnxtest.Config())
		if err != nil {
			return nil, err
		}
		enc, err = onnx.NewEncoder(rt, dir)
		return enc, err
	}
	defer func() {
		if enc != nil {
			enc.Close()
		}
	}()
	qpath := filepath.Join(cache, fmt.Sprintf("kgqa-dev-%d-%s.gob", len(c.questions), model))
	if c.qvecs, err = cachedVectors(qpath, m.Name, c.questions); err != nil {
		e, err := encoder()
		if err != nil {
			return err
		}
		if c.qvecs, err = e.Encode(ctx, c.questions); err != nil {
			return err
		}
		if err := saveVectors(qpath, vectorCache{m.Name, c.questions, c.qvecs}); err != nil {
			return err
		}
	}
	c.encoder = m.Name
	ids := make([]string, len(c.docs))
	for i, d := range c.docs {
		ids[i] = d.ID
	}
	dpath := filepath.Join(cache, fmt.Sprintf("%s-%d-%s.gob", c.name, len(c.docs), model))
	vecs, err := cachedVectors(dpath, m.Name, ids)
	if err != nil {
		if !encode {
			return fmt.Errorf("no cached document vectors (%v); DMAR_PARITY_ENCODE=1 computes them (long)", err)
		}
		e, err := encoder()
		if err != nil {
			return err
		}
		meter := progress.New(os.Stderr, "encode "+c.name, "docs", len(c.docs))
		const chunk = 256
		for lo := 0; lo < len(c.docs); lo += chunk {
			part := c.docs[lo:min(lo+chunk, len(c.docs))]
			texts := make([]string, len(part))
			for i, d := range part {
				texts[i] = corpus.EncodeText(d)
			}
			vs, err := e.Encode(ctx, texts)
			if err != nil {
				return err
			}
			vecs = append(vecs, vs...)
			meter.Add(len(part))
		}
		meter.Done()
		if err := saveVectors(dpath, vectorCache{m.Name, ids, vecs}); err != nil {
			return err
		}
	}
	for i := range c.docs {
		c.docs[i].Vector = vecs[i]
	}
	c.docVecs = true
	tb.Logf("%s: real %s vectors for %d documents and %d questions", c.name, m.Name, len(c.docs), len(c.questions))
	return nil
}

// cachedVectors reads a cache file made for exactly these ids by encoder.
func cachedVectors(path, encoder string, ids []string) ([][]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var vc vectorCache
	if err := gob.NewDecoder(f).Decode(&vc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if vc.Encoder != encoder || len(vc.IDs) != len(ids) || len(vc.Vecs) != len(ids) {
		return nil, fmt.Errorf("%s was made by %q for %d items", path, vc.Encoder, len(vc.IDs))
	}
	for i := range ids {
		if vc.IDs[i] != ids[i] {
			return nil, fmt.Errorf("%s does not match item %d", path, i)
		}
	}
	return vc.Vecs, nil
}

func saveVectors(path string, vc vectorCache) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	if err := gob.NewEncoder(f).Encode(&vc); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// withSyntheticVectors returns c's documents with seeded random unit vectors
// of the encoder's dimension (384) where c has no real ones. Only the import
// and latency benchmarks use them, and label them synthetic: throughput and
// latency hardly depend on the values, rankings do.
func (c *codexm) withSyntheticVectors() ([]retrieval.Document, bool) {
	if c.docVecs {
		return c.docs, false
	}
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]retrieval.Document, len(c.docs))
	for i, d := range c.docs {
		v := make([]float32, 384)
		var n float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			n += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n))
		}
		d.Vector = v
		out[i] = d
	}
	return out, true
}

// needParity skips heavy real-data runs unless DMAR_PARITY=1.
func needParity(tb testing.TB) {
	tb.Helper()
	if os.Getenv("DMAR_PARITY") != "1" {
		tb.Skip("real-data parity run: set DMAR_PARITY=1 (and DMAR_WEAVIATE_URL); it encodes codexm once (minutes) and loads it into Weaviate")
	}
}

// TestFixtures prepares (and caches) the real vectors: codexm-film's always,
// codexm's with DMAR_PARITY_ENCODE=1.
func TestFixtures(t *testing.T) {
	needParity(t)
	for _, c := range []*codexm{loadFixture(t, "codexm-film", true), loadCodexm(t)} {
		t.Logf("%s: %d documents, %d questions, encoder %q", c.name, len(c.docs), len(c.questions), c.encoder)
		if c.docVecs != (len(c.docs[0].Vector) == 384) {
			t.Fatalf("%s: docVecs %v but first vector has %d dimensions", c.name, c.docVecs, len(c.docs[0].Vector))
		}
	}
}
