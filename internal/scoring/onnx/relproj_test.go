package onnx_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/vec"
)

// statesEncoder is the default encoder (bge-small-en-v1.5-int8), which
// pools in Go and so keeps token states.
func statesEncoder(tb testing.TB) *onnx.Encoder {
	tb.Helper()
	onnxtest.NeedFile(tb, filepath.Join(onnxtest.EncoderDir(), "manifest.json"), "the default encoder")
	e, err := onnx.NewEncoder(onnxtest.Runtime(tb), onnxtest.EncoderDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

const relProjModel = "../../../models/relproj/relproj.onnx"

// span is the bytes of sub's first occurrence in s.
func span(tb testing.TB, s, sub string) scoring.Span {
	tb.Helper()
	i := strings.Index(s, sub)
	if i < 0 {
		tb.Fatalf("%q not in %q", sub, s)
	}
	return scoring.Span{Start: i, End: i + len(sub)}
}

// EncodeStates gives Encode's vector exactly, and pools over any words of
// the query: a span is cut whole, wherever the query's outer space puts
// it; a span inside a word piece, or one that leaves nothing, cannot be.
func TestEncodeStates(t *testing.T) {
	ctx := context.Background()
	e := statesEncoder(t)
	const q = "what movies has francis ford coppola contributed music to"
	want, err := e.Encode(ctx, []string{q})
	if err != nil {
		t.Fatal(err)
	}
	st, err := e.EncodeStates(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Vector, want[0]) {
		t.Fatal("EncodeStates' vector differs from Encode's")
	}
	all, ok := st.Pooled(nil)
	name := span(t, q, "francis ford coppola")
	cut, okCut := st.Pooled([]scoring.Span{name})
	if !ok || !okCut {
		t.Fatalf("Pooled: ok %v for nothing cut, %v for the name cut", ok, okCut)
	}
	if c := vec.Cosine64(all, cut); c > 0.999 {
		t.Errorf("cutting the name left the pooled states as they were (cosine %v)", c)
	}
	// The same name as two adjacent spans, and overlapping ones, cut the same pieces.
	parts, _ := st.Pooled([]scoring.Span{span(t, q, "ford coppola"), span(t, q, "francis ford")})
	if !slices.Equal(parts, cut) {
		t.Error("overlapping spans over the name pooled other pieces than the name's span")
	}
	// Outer space moves the spans, not the pieces.
	padded, err := e.EncodeStates(ctx, "  "+q+"\n")
	if err != nil {
		t.Fatal(err)
	}
	pcut, ok := padded.Pooled([]scoring.Span{{Start: name.Start + 2, End: name.End + 2}})
	if !ok || !slices.Equal(pcut, cut) {
		t.Errorf("the padded query's name cut differs (ok %v)", ok)
	}
	for _, bad := range []scoring.Span{span(t, q, "franc"), {Start: 0, End: len(q)}} {
		if _, ok := st.Pooled([]scoring.Span{bad}); ok {
			t.Errorf("cutting %q was accepted", q[bad.Start:bad.End])
		}
	}
	if _, err := testEncoder(t).EncodeStates(ctx, q); err == nil {
		t.Error("all-MiniLM-L6-v2, which pools in its graph, gave token states")
	}
}

// relationEncoder is all-MiniLM-L6-v2, the default relation encoder.
func relationEncoder(tb testing.TB) *onnx.Encoder { return testEncoder(tb) }

// The committed projection puts a question where the relation encoder
// would, near its relation: of a handful of relation texts, each question
// with its entity cut ranks the one it asks first, and questions it never
// trained on (kgqa dev) land near the relation encoder's own vectors.
func TestRelProjection(t *testing.T) {
	ctx := context.Background()
	onnxtest.NeedFile(t, relProjModel, "the relation projection")
	enc, rel := statesEncoder(t), relationEncoder(t)
	proj := onnxtest.Open(t, onnx.NewRelProjection, relProjModel)
	qe, err := onnx.NewQuestionEncoder(enc, proj, rel)
	if err != nil {
		t.Fatal(err)
	}
	rels := []string{"director", "place of birth", "spouse", "genre", "original language of film or TV show", "instrument", "employer"}
	rv, err := rel.Encode(ctx, rels)
	if err != nil {
		t.Fatal(err)
	}
	// question: the entity cut, the relation asked
	for q, c := range map[string]struct{ entity, want string }{
		"who directed the film Inception":     {"Inception", "director"},
		"where was Albert Einstein born":      {"Albert Einstein", "place of birth"},
		"what language is the film Amelie in": {"Amelie", "original language of film or TV show"},
		"who was Frida Kahlo married to":      {"Frida Kahlo", "spouse"},
		"what instrument does Yo-Yo Ma play":  {"Yo-Yo Ma", "instrument"},
	} {
		eq, err := qe.EncodeQuestion(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		v, ok, err := eq.Relation(ctx, []scoring.Span{span(t, q, c.entity)})
		if err != nil || !ok {
			t.Fatalf("%q: Relation: ok %v, %v", q, ok, err)
		}
		best, bestCos := "", -2.0
		for i, r := range rels {
			if cos := vec.Cosine64(v, rv[i]); cos > bestCos {
				best, bestCos = r, cos
			}
		}
		if best != c.want {
			t.Errorf("%q without %q: nearest relation %q, want %q", q, c.entity, best, c.want)
		}
	}
	qs := datasetTexts(t, "kgqa", "dev.jsonl", 64, func(r textRecord) string { return r.Question })
	want, err := rel.Encode(ctx, qs)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for i, q := range qs {
		eq, err := qe.EncodeQuestion(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		v, ok, err := eq.Relation(ctx, nil)
		if err != nil || !ok {
			t.Fatalf("%q: Relation: ok %v, %v", q, ok, err)
		}
		sum += vec.Cosine64(v, want[i])
	}
	if mean := sum / float64(len(qs)); mean < 0.5 {
		t.Errorf("mean cosine with the relation encoder's vectors %.3f over %d dev questions, want >= 0.5", mean, len(qs))
	}
}

// A projection is refused for encoders it was not trained on, and a model
// that is not one is refused at load.
func TestRelProjectionRefusesOtherEncoders(t *testing.T) {
	onnxtest.NeedFile(t, relProjModel, "the relation projection")
	enc, rel := statesEncoder(t), relationEncoder(t)
	proj := onnxtest.Open(t, onnx.NewRelProjection, relProjModel)
	if _, err := onnx.NewQuestionEncoder(rel, proj, rel); err == nil || !strings.Contains(err.Error(), proj.Encoder()) {
		t.Errorf("all-MiniLM-L6-v2 as the encoder: %v, want an error naming %s", err, proj.Encoder())
	}
	if _, err := onnx.NewQuestionEncoder(enc, proj, enc); err == nil || !strings.Contains(err.Error(), proj.Target()) {
		t.Errorf("the encoder as the relation encoder: %v, want an error naming %s", err, proj.Target())
	}
	onnxtest.NeedFile(t, relPriorModel, "the relation prior")
	if _, err := onnx.NewRelProjection(onnxtest.Runtime(t), relPriorModel); err == nil || !strings.Contains(err.Error(), `"features"`) {
		t.Errorf("the relation prior as a projection: %v, want an error naming the input it lacks", err)
	}
}

// OpenModels pairs the projection with the encoders it names: opened with
// the encoder and a relation encoder of its own, left off (with nothing to
// save) without one, and refused when named outright for other encoders.
func TestOpenModelsRelProjection(t *testing.T) {
	onnxtest.NeedEncoders(t, onnx.MiniLMName, onnx.DefaultEncoderName)
	onnxtest.NeedFile(t, relProjModel, "the relation projection")
	open := func(enc, rel string) (*onnx.Models, error) {
		return openModelsWith(t, enc, rel, func(c *onnx.ModelsConfig) { c.RelProjection = relProjModel })
	}
	if m, err := open(onnx.DefaultEncoderName, onnx.MiniLMName); err != nil {
		t.Fatal(err)
	} else if m.Questions == nil {
		t.Error("bge with MiniLM as the relation encoder: the projection is not open")
	}
	if m, err := open(onnx.DefaultEncoderName, ""); err != nil {
		t.Fatal(err)
	} else if m.Questions != nil {
		t.Error("no relation encoder of its own: the projection was opened")
	}
	if _, err := open(onnx.MiniLMName, onnx.DefaultEncoderName); err == nil {
		t.Error("the projection named outright for swapped encoders was accepted")
	}
}
