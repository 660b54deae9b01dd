package onnx_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

// testEncoder is all-MiniLM-L6-v2, whose published outputs the tests pin.
func testEncoder(tb testing.TB, opts ...onnx.EncoderOption) *onnx.Encoder {
	tb.Helper()
	dir := onnxtest.MiniLMDir()
	onnxtest.NeedFile(tb, filepath.Join(dir, "manifest.json"), "the sentence encoder")
	rt := onnxtest.Runtime(tb)
	e, err := onnx.NewEncoder(rt, dir, append([]onnx.EncoderOption{onnx.WithEncoderName(onnx.MiniLMName)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	return e
}

// The published all-MiniLM-L6-v2 embedding of "hello".
func TestEncoderHelloMatchesPublishedReference(t *testing.T) {
	e := testEncoder(t)
	if e.Dim() != 384 {
		t.Fatalf("Dim() = %d, want 384", e.Dim())
	}
	v, err := e.Encode(context.Background(), []string{"hello"})
	if err != nil {
		t.Fatal(err)
	}
	got := v[0]
	want := map[int]float32{0: -0.06277175, 1: 0.054958846, 2: 0.052164856, 382: 0.051483486, 383: 0.0070921564}
	for i, w := range want {
		if d := math.Abs(float64(got[i] - w)); d > 1e-4 {
			t.Errorf("embedding[%d] = %.8f, want %.8f (|diff| %.2g > 1e-4)", i, got[i], w, d)
		}
	}
	t.Logf("hello: %v ... %v", got[:3], got[382:])
}

// One Encoder serves many goroutines; each gets the vectors a lone call gives.
func TestEncoderConcurrentCallsAgree(t *testing.T) {
	e := testEncoder(t, onnx.WithBatchSize(3))
	texts := []string{"Who directed Inception?", "Christopher Nolan", "a film about dreams within dreams", "Paris", "hello"}
	ctx := context.Background()
	want, err := e.Encode(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 4)
	for g := range 4 {
		go func() {
			// Each goroutine sends the texts in its own rotation.
			rot := append(append([]string{}, texts[g:]...), texts[:g]...)
			got, err := e.Encode(ctx, rot)
			if err == nil {
				for i := range rot {
					w := want[(i+g)%len(texts)]
					for j := range w {
						if math.Abs(float64(got[i][j]-w[j])) > 1e-5 {
							err = fmt.Errorf("goroutine %d: %q differs at %d: %v vs %v", g, rot[i], j, got[i][j], w[j])
							break
						}
					}
				}
			}
			errc <- err
		}()
	}
	for range 4 {
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}
	for i, v := range want {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Errorf("%q: squared norm %v, want 1", texts[i], n)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Encode(cancelled, texts); err == nil {
		t.Error("Encode with a cancelled context succeeded")
	}
	if v, err := e.Encode(ctx, nil); err != nil || len(v) != 0 {
		t.Errorf("Encode(nil) = %v, %v; want no vectors, no error", v, err)
	}
}

func TestNewEncoderErrors(t *testing.T) {
	rt := onnxtest.Runtime(t)
	if _, err := onnx.NewEncoder(rt, t.TempDir()); err == nil || !strings.Contains(err.Error(), "scripts/setup.sh") {
		t.Errorf("NewEncoder on an empty folder = %v, want an error pointing at setup", err)
	}
	if _, err := onnx.NewEncoder(rt, onnxtest.MiniLMDir(), onnx.WithEncoderName(onnx.MiniLMName), onnx.WithBatchSize(0)); err == nil {
		t.Error("NewEncoder with batch size 0 succeeded")
	}
	// DMAR_ENCODER_BATCH is the configuration's (models.encoder_batch); a
	// malformed value is named there.
	env := map[string]string{"DMAR_ENCODER_BATCH": "lots"}
	if _, err := onnxtest.Settings(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "DMAR_ENCODER_BATCH") {
		t.Errorf("DMAR_ENCODER_BATCH=lots: %v, want an error naming the variable", err)
	}
}

// Close waits for the calls in flight instead of freeing the session under
// them (which crashed a server that shut down while a batched encoder call
// outlived its requests); calls after Close fail with an error.
func TestEncoderCloseWaitsForCallsInFlight(t *testing.T) {
	e := testEncoder(t)
	long := strings.Repeat("a long question about films and their directors ", 40)
	ctx := context.Background()
	started := make(chan struct{})
	done := make(chan error, 4)
	for g := range 4 {
		go func() {
			var err error
			for i := 0; err == nil; i++ {
				if g == 0 && i == 1 {
					close(started)
				}
				_, err = e.Encode(ctx, []string{long, "hello"})
			}
			done <- err
		}()
	}
	<-started
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if err := <-done; err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("a call after Close: %v, want an error saying the session is closed", err)
		}
	}
}
