package onnx

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	ort "github.com/yalue/onnxruntime_go"
)

// modelFile reads what every small model's loader checks first: the file's
// version (prefix, "-" and the start of its SHA-256) and its inputs and
// outputs. what names the model in errors.
func modelFile(path, what, prefix string) (version string, ins, outs []ort.InputOutputInfo, err error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	sum := sha256.Sum256(raw)
	if ins, outs, err = ort.GetInputOutputInfo(path); err != nil {
		return "", nil, nil, fmt.Errorf("%s: read %s: %w", what, path, err)
	}
	return prefix + "-" + hex.EncodeToString(sum[:6]), ins, outs, nil
}

// metadata returns the model's custom metadata values under keys, those
// present only.
func metadata(path, what string, keys ...string) (map[string]string, error) {
	meta, err := ort.GetModelMetadata(path)
	if err != nil {
		return nil, fmt.Errorf("%s: metadata of %s: %w", what, path, err)
	}
	defer meta.Destroy()
	out := map[string]string{}
	for _, k := range keys {
		if v, ok, err := meta.LookupCustomMetadataMap(k); err == nil && ok {
			out[k] = v
		}
	}
	return out, nil
}
