package onnx_test

import (
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
)

func TestEncoderConformance(t *testing.T) {
	e := testEncoder(t)
	scoringtest.Encoder(t, e)
	scoringtest.Encoder(t, e.Truncated(64))
}
