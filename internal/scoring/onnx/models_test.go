package onnx_test

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/testfile"
)

// openModels opens encoder (and rel as the relation encoder, "" for none)
// with the gates given, no GNN.
func openModels(t *testing.T, encoder, rel, gate, evgate string) (*onnx.Models, error) {
	t.Helper()
	return openModelsWith(t, encoder, rel, func(c *onnx.ModelsConfig) { c.Gate, c.EvidenceGate = gate, evgate })
}

// openModelsWith opens encoder (and rel as the relation encoder, "" for
// none), no GNN, with set's settings.
func openModelsWith(t *testing.T, encoder, rel string, set func(*onnx.ModelsConfig)) (*onnx.Models, error) {
	t.Helper()
	dir := func(n string) string { return filepath.Join(onnxtest.CacheDir(), "models", n) }
	c := onnx.ModelsConfig{Runtime: onnxtest.Config(), Encoder: encoder, EncoderDir: dir(encoder)}
	if rel != "" {
		c.RelationEncoder, c.RelationEncoderDir = rel, dir(rel)
	}
	set(&c)
	m, err := onnx.OpenModels(c, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil {
		t.Cleanup(m.Close)
	}
	return m, err
}

// The committed gates are per encoder: left at the default, the
// configuration opens the gate trained on the configured encoder's vectors
// (and the evidence gate trained with its scores), and an encoder without
// one gets fixed weights rather than a gate reading vectors it never saw.
// A gate named outright that was trained on another encoder is refused,
// with a message that says how to get one.
func TestGatesFollowTheEncoder(t *testing.T) {
	onnxtest.NeedEncoders(t, onnx.MiniLMName, onnx.DefaultEncoderName, "e5-small-v2-int8", "bge-small-en-v1.5")
	for _, enc := range []string{onnx.MiniLMName, onnx.DefaultEncoderName, "e5-small-v2-int8"} {
		m, err := openModels(t, enc, "", onnx.GateModelFile, onnx.EvidenceGateModelFile)
		if err != nil {
			t.Fatal(err)
		}
		g, ok := m.Gate.(*onnx.Gate)
		if !ok || g.Encoder() != enc {
			t.Fatalf("encoder %s: gate %v, want the one trained on %s", enc, m.Gate, enc)
		}
		eg, ok := m.EvidenceGate.(*onnx.EvidenceGate)
		if !ok || eg.Encoder() != enc {
			t.Fatalf("encoder %s: evidence gate %v, want the one trained with %s", enc, m.EvidenceGate, enc)
		}
	}
	m, err := openModels(t, "bge-small-en-v1.5", "", onnx.GateModelFile, onnx.EvidenceGateModelFile)
	if err != nil {
		t.Fatal(err)
	}
	if m.Gate != nil || m.EvidenceGate != nil {
		t.Fatalf("bge-small-en-v1.5 has no committed gate, got gate %v, evidence gate %v", m.Gate, m.EvidenceGate)
	}
	_, err = openModels(t, onnx.MiniLMName, "", "../../../"+onnx.GateFileFor(onnx.DefaultEncoderName), "")
	if err == nil || !strings.Contains(err.Error(), "trained on "+onnx.DefaultEncoderName) || !strings.Contains(err.Error(), "DMAR_ENCODER="+onnx.MiniLMName) {
		t.Fatalf("another encoder's gate named outright: err %v", err)
	}
	_, err = openModels(t, onnx.DefaultEncoderName, "", "", "../../../"+onnx.EvidenceGateFileFor(onnx.MiniLMName))
	if err == nil || !strings.Contains(err.Error(), "trained on "+onnx.MiniLMName) || !strings.Contains(err.Error(), "models/evgate/train.sh") {
		t.Fatalf("another encoder's evidence gate named outright: err %v", err)
	}
}

// A relation encoder other than the encoder is a model of its own; the same
// name (or none) shares the encoder.
func TestRelationEncoderOpensApart(t *testing.T) {
	onnxtest.NeedEncoders(t, onnx.MiniLMName, onnx.DefaultEncoderName)
	m, err := openModels(t, onnx.DefaultEncoderName, onnx.MiniLMName, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if m.RelationEncoder == m.Encoder || m.RelationEncoder.Spec().Name != onnx.MiniLMName || m.Encoder.Spec().Name != onnx.DefaultEncoderName {
		t.Fatalf("relation encoder %s, encoder %s", m.RelationEncoder.Version(), m.Encoder.Version())
	}
	for _, rel := range []string{"", onnx.DefaultEncoderName} {
		m, err := openModels(t, onnx.DefaultEncoderName, rel, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if m.RelationEncoder != m.Encoder {
			t.Fatalf("relation encoder %q: a second model was opened", rel)
		}
	}
}

// The scripts that name the default encoder (setup fetches it, the training
// scripts write its models to the files dmar opens for it) name this one.
func TestScriptsNameTheDefaultEncoder(t *testing.T) {
	for file, want := range map[string]string{
		"../../../models/encoder-files.sh":      "default_encoder=" + onnx.DefaultEncoderName + " ",
		"../../../scripts/setup/30-encoders.sh": "want=" + onnx.DefaultEncoderName + "${DMAR_ENCODER:+",
	} {
		b := testfile.Read(t, file)
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not contain %q", file, want)
		}
	}
}
