package onnx_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
	"github.com/dmar-kg/dmar/internal/testfile"
)

// The runtime settings as dmar's configuration reads them from the
// environment (onnx itself reads none), and Validate's verdict on them.
func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want onnx.Config
		bad  string // substring of Validate's error, "" when valid
	}{
		{"defaults", map[string]string{"DMAR_CACHE": "/c"},
			onnx.Config{LibPath: "/c/onnxruntime/libonnxruntime.so.1", Device: "cpu"}, ""},
		{"explicit", map[string]string{"DMAR_ORT_LIB": "/x/lib.so", "DMAR_DEVICE": "cuda", "DMAR_ORT_THREADS": "3", "DMAR_CUDA_DEVICE": "1"},
			onnx.Config{LibPath: "/x/lib.so", Device: "cuda", IntraOpThreads: 3, CUDADeviceID: 1}, ""},
		{"bad device", map[string]string{"DMAR_ORT_LIB": "/x", "DMAR_DEVICE": "tpu"},
			onnx.Config{LibPath: "/x", Device: "tpu"}, `device "tpu"`},
		{"bad threads", map[string]string{"DMAR_ORT_LIB": "/x", "DMAR_ORT_THREADS": "many"},
			onnx.Config{LibPath: "/x", Device: "cpu"}, "DMAR_ORT_THREADS"},
		{"negative threads", map[string]string{"DMAR_ORT_LIB": "/x", "DMAR_ORT_THREADS": "-1"},
			onnx.Config{LibPath: "/x", Device: "cpu", IntraOpThreads: -1}, "DMAR_ORT_THREADS"},
		{"bad gpu", map[string]string{"DMAR_ORT_LIB": "/x", "DMAR_CUDA_DEVICE": "-2"},
			onnx.Config{LibPath: "/x", Device: "cpu", CUDADeviceID: -2}, "DMAR_CUDA_DEVICE"},
		{"tf32 on", map[string]string{"DMAR_ORT_LIB": "/x", "DMAR_DEVICE": "cuda", "DMAR_CUDA_TF32": "true"},
			onnx.Config{LibPath: "/x", Device: "cuda", CUDATF32: true}, ""},
		{"tf32 off", map[string]string{"DMAR_ORT_LIB": "/x", "DMAR_DEVICE": "cuda", "DMAR_CUDA_TF32": "0"},
			onnx.Config{LibPath: "/x", Device: "cuda"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := onnxtest.Settings(func(k string) string { return tt.env[k] })
			got := onnxtest.ORT(c)
			if got != tt.want {
				t.Fatalf("settings from %v = %+v, want %+v", tt.env, got, tt.want)
			}
			if err == nil {
				err = got.Validate()
			}
			switch {
			case tt.bad == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.bad != "" && (err == nil || !strings.Contains(err.Error(), tt.bad)):
				t.Fatalf("Validate = %v, want an error mentioning %q", err, tt.bad)
			}
		})
	}
}

// The CUDA check runs before anything is loaded, so a fake library path is
// enough to see which provider files the error names.
// A DMAR_CUDA_TF32 that is not a boolean is named, not read as false.
func TestConfigFromEnvBadTF32(t *testing.T) {
	env := map[string]string{"DMAR_ORT_LIB": "/x", "DMAR_CUDA_TF32": "maybe"}
	_, err := onnxtest.Settings(func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), "DMAR_CUDA_TF32") || !strings.Contains(err.Error(), `"maybe" is not true or false`) {
		t.Fatalf("settings = %v, want an error naming DMAR_CUDA_TF32 and its value", err)
	}
}

func TestOpenCUDANamesMissingProviderLibs(t *testing.T) {
	tests := []struct {
		name    string
		present []string
		missing []string
	}{
		{"none", nil, onnx.CUDAProviderLibs},
		{"shared only", []string{"libonnxruntime_providers_shared.so"}, []string{"libonnxruntime_providers_cuda.so"}},
		{"cuda only", []string{"libonnxruntime_providers_cuda.so"}, []string{"libonnxruntime_providers_shared.so"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			lib := filepath.Join(dir, "libonnxruntime.so.1")
			for _, f := range append([]string{"libonnxruntime.so.1"}, tt.present...) {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := onnx.Open(onnx.Config{LibPath: lib, Device: onnx.CUDA})
			if err == nil {
				t.Fatal("Open with device cuda and no provider libraries succeeded")
			}
			msg := err.Error()
			i := strings.Index(msg, "(missing: ")
			if i < 0 {
				t.Fatalf("error does not list missing files: %v", err)
			}
			listed := msg[i:]
			listed, _, _ = strings.Cut(listed, ")")
			for _, f := range tt.missing {
				if !strings.Contains(listed, f) {
					t.Errorf("error %q does not name missing %s", msg, f)
				}
			}
			for _, f := range tt.present {
				if strings.Contains(listed, f) {
					t.Errorf("error %q names %s, which is present", msg, f)
				}
			}
			if !strings.Contains(msg, dir) {
				t.Errorf("error %q does not say where the files are expected", msg)
			}
		})
	}
}

func TestOpenMissingLibrary(t *testing.T) {
	_, err := onnx.Open(onnx.Config{LibPath: filepath.Join(t.TempDir(), "nope.so"), Device: onnx.CPU})
	if err == nil || !strings.Contains(err.Error(), "scripts/setup.sh") {
		t.Fatalf("Open with a missing library = %v, want an error pointing at setup", err)
	}
}

// affine.onnx computes Y = X @ W + b (see testdata/affine.py).
var (
	affineW = [3][2]float32{{1, -2}, {0.5, 0.25}, {-1.5, 3}}
	affineB = [2]float32{0.125, -0.75}
)

func runAffine(s *onnx.Session, x []float32) ([]float32, error) {
	n := int64(len(x) / 3)
	in, err := ort.NewTensor(ort.NewShape(n, 3), x)
	if err != nil {
		return nil, err
	}
	out, err := ort.NewEmptyTensor[float32](ort.NewShape(n, 2))
	if err != nil {
		in.Destroy()
		return nil, err
	}
	defer onnx.Destroy(in, out)
	if err := s.Run([]ort.Value{in}, []ort.Value{out}); err != nil {
		return nil, err
	}
	return append([]float32(nil), out.GetData()...), nil
}

func TestSessionSharedAcrossGoroutines(t *testing.T) {
	rt := onnxtest.Runtime(t)
	s, err := rt.NewSession("testdata/affine.onnx", []string{"X"}, []string{"Y"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for it := 0; it < 50; it++ {
				n := 1 + (g+it)%7
				x := make([]float32, 3*n)
				for i := range x {
					x[i] = float32(g*100+it) + float32(i)*0.5
				}
				y, err := runAffine(s, x)
				if err != nil {
					errc <- err
					return
				}
				for r := 0; r < n; r++ {
					for c := 0; c < 2; c++ {
						want := affineB[c]
						for k := 0; k < 3; k++ {
							want += x[3*r+k] * affineW[k][c]
						}
						if got := y[2*r+c]; math.Abs(float64(got-want)) > 1e-3 {
							t.Errorf("goroutine %d: Y[%d][%d] = %v, want %v", g, r, c, got, want)
						}
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	if v := rt.Version(); !strings.HasPrefix(v, "1.") {
		t.Errorf("Version() = %q", v)
	}
}

func TestSessionErrors(t *testing.T) {
	rt := onnxtest.Runtime(t)
	if _, err := rt.NewSession("testdata/none.onnx", []string{"X"}, []string{"Y"}); err == nil {
		t.Error("NewSession on a missing file succeeded")
	}
	if _, err := rt.NewSession("testdata/affine.onnx", []string{"nope"}, []string{"Y"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("NewSession with an unknown input name = %v, want an error naming it", err)
	}
	s, err := rt.NewSession("testdata/affine.onnx", []string{"X"}, []string{"Y"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Run(nil, nil); err == nil || !strings.Contains(err.Error(), "takes 1 inputs") {
		t.Errorf("Run with no tensors = %v, want an arity error", err)
	}
	in, _ := ort.NewTensor(ort.NewShape(1, 4), []float32{1, 2, 3, 4})
	defer in.Destroy()
	if err := s.Run([]ort.Value{in}, []ort.Value{nil}); err == nil {
		t.Error("Run with a [1,4] input to a [batch,3] model succeeded")
	}
	other := filepath.Join(t.TempDir(), "libonnxruntime.so.1")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := onnx.Open(onnx.Config{LibPath: other, Device: onnx.CPU}); err == nil || !strings.Contains(err.Error(), "already") {
		t.Errorf("Open with a second library path in the same process = %v, want an error", err)
	}
}

func TestSessionFromBytes(t *testing.T) {
	rt := onnxtest.Runtime(t)
	model := testfile.Read(t, "testdata/affine.onnx")
	if _, err := rt.NewSessionFromBytes("affine", model, []string{"X"}, []string{"Z"}); err == nil || !strings.Contains(err.Error(), `"Z"`) {
		t.Errorf("NewSessionFromBytes with an unknown output = %v, want an error naming it", err)
	}
	if _, err := rt.NewSessionFromBytes("garbage", []byte("not onnx"), []string{"X"}, []string{"Y"}); err == nil {
		t.Error("NewSessionFromBytes on garbage succeeded")
	}
	s, err := rt.NewSessionFromBytes("affine", model, []string{"X"}, []string{"Y"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	y, err := runAffine(s, []float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	// [1 2 3] @ W + b = [1+1-4.5, -2+0.5+9] + [0.125, -0.75]
	if want := []float32{-2.375, 6.75}; math.Abs(float64(y[0]-want[0])) > 1e-6 || math.Abs(float64(y[1]-want[1])) > 1e-6 {
		t.Errorf("Y = %v, want %v", y, want)
	}
}
