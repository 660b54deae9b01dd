// Package onnxtest gives tests an ONNX Runtime, or skips them when setup has
// not installed one. Under CI=true a missing library fails the test instead,
// so CI cannot pass by skipping. Paths and runtime settings come from dmar's
// configuration (internal/config: defaults, then DMAR_* variables).
package onnxtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
)

// Settings is dmar's configuration as the environment sets it (defaults,
// then DMAR_* variables read through getenv), and its problems.
func Settings(getenv func(string) string) (config.Config, error) {
	c := config.Default(config.CacheDir(getenv), "")
	err := config.Env(&c, getenv).Err()
	return c, err
}

// ORT is the runtime part of c as onnx takes it.
func ORT(c config.Config) onnx.Config {
	o := c.ORT
	return onnx.Config{LibPath: o.Lib, Device: o.Device, IntraOpThreads: o.Threads, CUDADeviceID: o.CUDADevice, CUDATF32: o.CUDATF32, Spin: o.Spin}
}

func settings() config.Config {
	c, _ := Settings(os.Getenv) // a malformed variable shows when the runtime opens
	return c
}

// Config is the runtime configuration of the environment.
func Config() onnx.Config { return ORT(settings()) }

// EncoderDir is the sentence encoder folder of the environment.
func EncoderDir() string { return settings().Models.EncoderDir }

// MiniLMDir is all-MiniLM-L6-v2's folder (onnx.MiniLMName): the tests that
// pin its published outputs use it whatever the default encoder is. Open it
// with onnx.WithEncoderName(onnx.MiniLMName).
func MiniLMDir() string {
	return filepath.Join(filepath.Dir(settings().Models.EncoderDir), onnx.MiniLMName)
}

// CacheDir is dmar's cache folder ($DMAR_CACHE, else ~/.cache/dmar).
func CacheDir() string { return config.CacheDir(os.Getenv) }

// Runtime opens the runtime configured by the environment.
func Runtime(tb testing.TB) *onnx.Runtime {
	tb.Helper()
	cfg := Config()
	NeedFile(tb, cfg.LibPath, "the ONNX Runtime library")
	rt, err := onnx.Open(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return rt
}

// Open opens the model at path with open (onnx.NewGate, onnx.NewRanker, ...)
// on the test runtime, and closes it when the test ends.
func Open[M interface{ Close() error }](tb testing.TB, open func(*onnx.Runtime, string) (M, error), path string) M {
	tb.Helper()
	m, err := open(Runtime(tb), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
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

// NeedEncoders skips the test (fails it when CI=true) unless the ONNX
// Runtime library and every named registry encoder are installed; "" is
// the configured encoder folder.
func NeedEncoders(tb testing.TB, names ...string) {
	tb.Helper()
	NeedFile(tb, Config().LibPath, "the ONNX Runtime library")
	for _, n := range names {
		dir, what := EncoderDir(), "the sentence encoder"
		if n != "" {
			dir, what = filepath.Join(CacheDir(), "models", n), "encoder "+n+" (DMAR_ENCODERS=all scripts/setup.sh)"
		}
		NeedFile(tb, filepath.Join(dir, "manifest.json"), what)
	}
}
