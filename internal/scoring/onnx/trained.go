package onnx

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	ort "github.com/yalue/onnxruntime_go"
)

// committedFile is the committed model trained with encoder's vectors or
// scores: file for the default encoder, and beside it the file with
// "-NAME" before ".onnx" for another (models/gate/gate-NAME.onnx).
func committedFile(file, encoder string) string {
	if encoder == "" || encoder == DefaultEncoderName {
		return file
	}
	return strings.TrimSuffix(file, ".onnx") + "-" + encoder + ".onnx"
}

// trained is what the models trained on one encoder's vectors or scores
// (the gate, the evidence gate, the ranker) share.
type trained struct {
	sess    *Session
	version string // the model's name, "-" and the start of its file's SHA-256
	encoder string // the registry name of the encoder it was trained on ("" unrecorded)
}

// Encoder is the registry name of the encoder whose vectors or scores the
// model was trained on ("" when the model does not record it).
func (t *trained) Encoder() string { return t.encoder }

// Version implements the model's scoring port: its name ("gate",
// "evgate", "ranker") and the start of the model file's SHA-256.
func (t *trained) Version() string { return t.version }

// Close frees the session.
func (t *trained) Close() error { return t.sess.Close() }

// openFeatures loads a model at path that takes the feature columns
// features [B,F] as its input "features" and gives output [B,width]; its
// "features" metadata must name the columns in order, so that a model
// trained on other columns is refused at start-up rather than fed the wrong
// ones. what names the model in errors; prefix starts its version.
func openFeatures(rt *Runtime, path, what, prefix string, features []string, output string, width int64) (trained, error) {
	version, ins, outs, err := modelFile(path, what, prefix)
	if err != nil {
		return trained{}, err
	}
	nf := int64(len(features))
	if !hasTensor(ins, "features", nf) || !hasTensor(outs, output, width) {
		return trained{}, fmt.Errorf("%s: %s needs an input \"features\" [B,%d] and an output %q [B,%d]", what, path, nf, output, width)
	}
	enc, err := featuresOf(path, what, features)
	if err != nil {
		return trained{}, err
	}
	sess, err := rt.NewSession(path, []string{"features"}, []string{output})
	if err != nil {
		return trained{}, fmt.Errorf("%s: %w", what, err)
	}
	return trained{sess: sess, version: version, encoder: enc}, nil
}

// hasTensor says one of ts is named name with shape [B, width].
func hasTensor(ts []ort.InputOutputInfo, name string, width int64) bool {
	for _, t := range ts {
		if t.Name == name && len(t.Dimensions) == 2 && t.Dimensions[1] == width {
			return true
		}
	}
	return false
}

// featuresOf checks that the model at path was trained on the columns want,
// in order (its "features" metadata), and returns the encoder it records.
func featuresOf(path, what string, want []string) (string, error) {
	md, err := metadata(path, what, "features", "encoder")
	if err != nil {
		return "", err
	}
	names, ok := md["features"]
	if !ok {
		return "", fmt.Errorf("%s: %s has no \"features\" metadata", what, path)
	}
	var got []string
	if err := json.Unmarshal([]byte(names), &got); err != nil {
		return "", fmt.Errorf("%s: features of %s: %w", what, path, err)
	}
	if !slices.Equal(got, want) {
		return "", fmt.Errorf("%s: %s was trained on features %v, this build computes %v", what, path, got, want)
	}
	return md["encoder"], nil
}

// run runs the session on x [B,width] and returns read of its output
// [B,outWidth], flat (valid only during read). what names the model in
// errors.
func run[R any](sess *Session, what string, x []float32, B, width, outWidth int, read func(flat []float32) R) (R, error) {
	var none R
	in, err := ort.NewTensor(ort.NewShape(int64(B), int64(width)), x)
	if err != nil {
		return none, fmt.Errorf("%s: input tensor: %w", what, err)
	}
	defer in.Destroy()
	outT, err := ort.NewEmptyTensor[float32](ort.NewShape(int64(B), int64(outWidth)))
	if err != nil {
		return none, fmt.Errorf("%s: output tensor: %w", what, err)
	}
	defer outT.Destroy()
	if err := sess.Run([]ort.Value{in}, []ort.Value{outT}); err != nil {
		return none, fmt.Errorf("%s: %w", what, err)
	}
	flat := outT.GetData()
	if len(flat) != outWidth*B {
		return none, fmt.Errorf("%s: output of unexpected size", what)
	}
	return read(flat), nil
}
