// Package onnxtest gives tests an ONNX Runtime, or skips them when setup has
// not installed one. Under CI=true a missing library fails the test instead,
// so CI cannot pass by skipping.
package onnxtest

import (
	"os"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring/onnx"
)

// Runtime opens the runtime configured by the environment (see
// onnx.ConfigFromEnv).
func Runtime(tb testing.TB) *onnx.Runtime {
	tb.Helper()
	cfg := onnx.ConfigFromEnv()
	NeedFile(tb, cfg.LibPath, "the ONNX Runtime library")
	rt, err := onnx.Open(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return rt
}

// NeedFile skips the test (fails it when CI=true) if path does not exist.
func NeedFile(tb testing.TB, path, what string) {
	tb.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	msg := what + " is missing at " + path + "; run scripts/setup.sh (or set DMAR_CACHE / DMAR_ORT_LIB / DMAR_ENCODER_DIR)"
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}
