package onnx_test

import (
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
)

func TestEncoderConformance(t *testing.T) {
	e := testEncoder(t)
	scoringtest.Encoder(t, e)
	scoringtest.Encoder(t, e.Truncated(64))
}

// The registry's other encoders, query and passage sides. The int8 ones run
// one text per call: their dynamic quantisation makes a batched vector
// depend on its neighbours (docs/onnx.md), which the suite's "batched equals
// single" check would flag by design.
func TestRegistryEncoderConformance(t *testing.T) {
	for _, name := range extraEncoders {
		t.Run(name, func(t *testing.T) {
			var opts []onnx.EncoderOption
			if strings.HasSuffix(name, "-int8") {
				opts = append(opts, onnx.WithBatchSize(1))
			}
			e := registryEncoder(t, name, opts...)
			scoringtest.Encoder(t, e)
			scoringtest.Encoder(t, e.Truncated(64).Passage())
		})
	}
}
