// Package onnx runs dmar's models (sentence encoder, Siamese GNN, gate) with
// ONNX Runtime through github.com/yalue/onnxruntime_go. The runtime library is
// loaded with dlopen from a configured path (setup installs it into the
// cache); one ORT environment serves the whole process, and sessions are
// created once and shared by goroutines, each call bringing its own tensors.
package onnx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// Devices dmar can run on.
const (
	CPU  = "cpu"
	CUDA = "cuda"
)

// CUDAProviderLibs are the provider libraries ONNX Runtime loads for the CUDA
// execution provider; they must sit next to the core library. The npm
// package that setup installs does not ship them.
var CUDAProviderLibs = []string{"libonnxruntime_providers_shared.so", "libonnxruntime_providers_cuda.so"}

// Config says which ONNX Runtime library to load and where models run.
// dmar resolves it from its configuration (internal/config); this package
// reads no environment.
type Config struct {
	// LibPath is the path of libonnxruntime.so.1 (ORT >= 1.24).
	LibPath string
	// Device is "cpu" or "cuda".
	Device string
	// IntraOpThreads is each session's thread pool size; 0: half the CPUs
	// the process may use, at least one (sessionThreads; ORT's choice on
	// CUDA). Several sessions should share the cores.
	IntraOpThreads int
	// CUDADeviceID picks the GPU when Device is "cuda".
	CUDADeviceID int
	// CUDATF32 lets cuDNN/cuBLAS use TF32 for float32 matrix products on
	// Ampere and newer GPUs. Off by default: TF32 keeps 10 mantissa bits,
	// which moved embeddings by up to 5e-4 on an H200, past the 1e-4 the
	// parity tests hold; on, models run faster with results that differ from
	// the CPU path in the fourth decimal.
	CUDATF32 bool
	// Spin lets idle intra-op workers spin a while waiting for the next
	// operator, as ORT does by default. Off (dmar's default), they sleep:
	// under concurrent requests on a few cores spinning workers took the
	// CPU the requests' other work needed (docs/operations.md, issue 16).
	Spin bool
}

// Validate checks the configuration without loading anything.
func (c Config) Validate() error {
	switch {
	case c.LibPath == "":
		return errors.New("onnx: no ONNX Runtime library path (set DMAR_ORT_LIB or run scripts/setup.sh)")
	case c.Device != CPU && c.Device != CUDA:
		return fmt.Errorf("onnx: device %q: want %q or %q (DMAR_DEVICE)", c.Device, CPU, CUDA)
	case c.IntraOpThreads < 0:
		return fmt.Errorf("onnx: intra-op threads must be a number >= 0 (DMAR_ORT_THREADS), got %d", c.IntraOpThreads)
	case c.CUDADeviceID < 0:
		return fmt.Errorf("onnx: CUDA device id must be a number >= 0 (DMAR_CUDA_DEVICE), got %d", c.CUDADeviceID)
	}
	return nil
}

// Threads is how many cores the configuration gives a model: IntraOpThreads,
// or, at 0, every CPU the process may use (EncodeCorpus runs that many
// single-threaded model calls at once).
func (c Config) Threads() int {
	if c.IntraOpThreads > 0 {
		return c.IntraOpThreads
	}
	return runtime.GOMAXPROCS(0)
}

// MissingCUDALibs returns the CUDA provider libraries absent from the
// directory holding libPath.
func MissingCUDALibs(libPath string) []string {
	dir := filepath.Dir(libPath)
	var missing []string
	for _, name := range CUDAProviderLibs {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			missing = append(missing, name)
		}
	}
	return missing
}

// The process's one ORT environment. onnxruntime_go keeps it in a global, so
// the library path is fixed by the first Open.
var env struct {
	sync.Mutex
	lib string
	err error
}

func initEnv(lib string) error {
	env.Lock()
	defer env.Unlock()
	if _, err := os.Stat(lib); err != nil {
		// Not remembered: setup may install the library later in the process.
		return fmt.Errorf("onnx: ONNX Runtime library: %w (run scripts/setup.sh or set DMAR_ORT_LIB)", err)
	}
	if env.lib != "" {
		if env.lib != lib {
			return fmt.Errorf("onnx: the ONNX Runtime environment was already initialised from %s; cannot switch to %s in one process", env.lib, lib)
		}
		return env.err
	}
	ort.SetSharedLibraryPath(lib)
	env.lib = lib
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		env.err = fmt.Errorf("onnx: initialise ONNX Runtime from %s: %w", lib, err)
	}
	return env.err
}

// Runtime is a configured handle on the process's ORT environment. It is
// safe for concurrent use; the environment lives until the process ends.
type Runtime struct {
	cfg Config
}

// Open validates cfg, initialises the environment once per process and, for
// device cuda, checks at start-up that the CUDA provider can be appended:
// missing provider libraries are named in the error.
func Open(cfg Config) (*Runtime, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !fileExists(cfg.LibPath) {
		// Checked before the once-per-process environment, so the message
		// does not depend on what ran earlier in the process.
		return nil, fmt.Errorf("onnx: ONNX Runtime library %s not found (run scripts/setup.sh or set DMAR_ORT_LIB)", cfg.LibPath)
	}
	if cfg.Device == CUDA {
		if missing := MissingCUDALibs(cfg.LibPath); len(missing) > 0 {
			return nil, fmt.Errorf("onnx: device cuda needs %s next to %s (missing: %s); they come with an ONNX Runtime GPU build of the same version as the core library (see docs/onnx.md); or use device cpu",
				strings.Join(CUDAProviderLibs, " and "), cfg.LibPath, strings.Join(missing, ", "))
		}
	}
	if err := initEnv(cfg.LibPath); err != nil {
		return nil, err
	}
	rt := &Runtime{cfg: cfg}
	if cfg.Device == CUDA {
		// Appending the provider loads it and CUDA; fail now, not at the first request.
		o, err := rt.sessionOptions()
		if err != nil {
			return nil, err
		}
		o.Destroy()
	}
	return rt, nil
}

// sessionThreads is a session's intra-op thread pool: IntraOpThreads, or
// at 0 on the CPU half the CPUs the process may use, at least one: a
// request runs two model calls at once (the query encoder and the relation
// encoder), and one pool per core each ran behind pools of half on two
// cores, alone and under load (docs/eval/performance.md). 0 on CUDA: ORT's
// choice.
func (c Config) sessionThreads() int {
	if c.IntraOpThreads > 0 || c.Device == CUDA {
		return c.IntraOpThreads
	}
	return max(1, runtime.GOMAXPROCS(0)/2)
}

// withThreads is rt with n intra-op threads per session.
func (rt *Runtime) withThreads(n int) *Runtime {
	c := rt.cfg
	c.IntraOpThreads = n
	return &Runtime{cfg: c}
}

// Config returns the runtime's configuration.
func (rt *Runtime) Config() Config { return rt.cfg }

// Version is the loaded ONNX Runtime's version.
func (rt *Runtime) Version() string { return ort.GetVersion() }

func (rt *Runtime) sessionOptions() (*ort.SessionOptions, error) {
	o, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("onnx: session options: %w", err)
	}
	if n := rt.cfg.sessionThreads(); n > 0 {
		if err := o.SetIntraOpNumThreads(n); err != nil {
			o.Destroy()
			return nil, fmt.Errorf("onnx: intra-op threads %d: %w", n, err)
		}
	}
	if !rt.cfg.Spin {
		if err := o.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
			o.Destroy()
			return nil, fmt.Errorf("onnx: intra-op spinning off: %w", err)
		}
	}
	if rt.cfg.Device == CUDA {
		if err := appendCUDA(o, rt.cfg.CUDADeviceID, rt.cfg.CUDATF32); err != nil {
			o.Destroy()
			return nil, err
		}
	}
	return o, nil
}

func appendCUDA(o *ort.SessionOptions, device int, tf32 bool) error {
	// ORT loads the provider library (and through it CUDA, cuBLAS, cuDNN)
	// here, so a machine without them fails at start-up, not mid-request.
	hint := fmt.Sprintf("the CUDA provider needs %s next to the core library and the CUDA/cuDNN libraries its build links (on the loader path or beside it), plus a GPU driver; or use device cpu",
		strings.Join(CUDAProviderLibs, " and "))
	co, err := ort.NewCUDAProviderOptions()
	if err != nil {
		return fmt.Errorf("onnx: CUDA provider options: %w (%s)", err, hint)
	}
	defer co.Destroy()
	// ORT's CUDA provider enables TF32 unless told otherwise.
	useTF32 := "0"
	if tf32 {
		useTF32 = "1"
	}
	if err := co.Update(map[string]string{"device_id": strconv.Itoa(device), "use_tf32": useTF32}); err != nil {
		return fmt.Errorf("onnx: CUDA provider (device %d): %w (%s)", device, err, hint)
	}
	if err := o.AppendExecutionProviderCUDA(co); err != nil {
		return fmt.Errorf("onnx: append the CUDA execution provider (device %d): %w (%s)", device, err, hint)
	}
	return nil
}

// Destroy destroys tensors, skipping nil ones; for defer after a Run.
func Destroy(vs ...ort.Value) {
	for _, v := range vs {
		if v != nil {
			v.Destroy()
		}
	}
}

// Session is a model loaded once and shared: Run may be called from several
// goroutines, each with its own input and output tensors.
type Session struct {
	// mu is held for reading by every Run and for writing by Close, so that
	// Close waits for the runs in flight: freeing a session under a running
	// call crashes the process, and some calls outlive the request that
	// started them (a batched encoder call shared by requests that have
	// gone, a prefetch).
	mu      sync.RWMutex
	s       *ort.DynamicAdvancedSession
	path    string
	inputs  []string
	outputs []string
}

// errClosed is Run's error after Close.
var errClosed = errors.New("session closed")

// NewSession loads the ONNX model at path with the runtime's options.
// inputs and outputs name the graph's inputs and outputs in the order Run
// takes them.
func (rt *Runtime) NewSession(path string, inputs, outputs []string) (*Session, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("onnx: model: %w", err)
	}
	if err := checkNames(path, inputs, outputs); err != nil {
		return nil, err
	}
	return rt.newSession(path, inputs, outputs, func(o *ort.SessionOptions) (*ort.DynamicAdvancedSession, error) {
		return ort.NewDynamicAdvancedSession(path, inputs, outputs, o)
	})
}

// NewSessionFromBytes is NewSession for a model held in memory (e.g. a small
// committed model embedded with go:embed); name is used in messages.
func (rt *Runtime) NewSessionFromBytes(name string, model []byte, inputs, outputs []string) (*Session, error) {
	ins, outs, err := ort.GetInputOutputInfoWithONNXData(model)
	if err != nil {
		return nil, fmt.Errorf("onnx: read %s: %w", name, err)
	}
	if err := matchNames(name, inputs, outputs, ins, outs); err != nil {
		return nil, err
	}
	return rt.newSession(name, inputs, outputs, func(o *ort.SessionOptions) (*ort.DynamicAdvancedSession, error) {
		return ort.NewDynamicAdvancedSessionWithONNXData(model, inputs, outputs, o)
	})
}

// newSession makes a session by create with the runtime's options; name is
// the model's path or name, for messages.
func (rt *Runtime) newSession(name string, inputs, outputs []string, create func(*ort.SessionOptions) (*ort.DynamicAdvancedSession, error)) (*Session, error) {
	o, err := rt.sessionOptions()
	if err != nil {
		return nil, err
	}
	defer o.Destroy()
	s, err := create(o)
	if err != nil {
		return nil, fmt.Errorf("onnx: load %s: %w", name, err)
	}
	return &Session{s: s, path: name, inputs: inputs, outputs: outputs}, nil
}

// checkNames fails when the model lacks a named input or output; ORT itself
// would only notice at the first Run.
func checkNames(path string, inputs, outputs []string) error {
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return fmt.Errorf("onnx: read %s: %w", path, err)
	}
	return matchNames(path, inputs, outputs, ins, outs)
}

func matchNames(path string, inputs, outputs []string, ins, outs []ort.InputOutputInfo) error {
	for _, c := range []struct {
		kind  string
		want  []string
		infos []ort.InputOutputInfo
	}{{"input", inputs, ins}, {"output", outputs, outs}} {
		have := make([]string, len(c.infos))
		for i, in := range c.infos {
			have[i] = in.Name
		}
		for _, n := range c.want {
			if !slices.Contains(have, n) {
				return fmt.Errorf("onnx: %s has no %s %q (it has %s)", filepath.Base(path), c.kind, n, strings.Join(have, ", "))
			}
		}
	}
	return nil
}

// Run runs the model. Outputs may hold nil values, which ORT allocates; the
// caller destroys every tensor it passed or got back.
func (s *Session) Run(inputs, outputs []ort.Value) error {
	if len(inputs) != len(s.inputs) || len(outputs) != len(s.outputs) {
		return fmt.Errorf("onnx: %s takes %d inputs and %d outputs, got %d and %d",
			filepath.Base(s.path), len(s.inputs), len(s.outputs), len(inputs), len(outputs))
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.s == nil {
		return fmt.Errorf("onnx: run %s: %w", filepath.Base(s.path), errClosed)
	}
	if err := s.s.Run(inputs, outputs); err != nil {
		return fmt.Errorf("onnx: run %s: %w", filepath.Base(s.path), err)
	}
	return nil
}

// Close frees the session once the runs in flight have returned; a Run
// after it fails.
func (s *Session) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.s == nil {
		return nil
	}
	err := s.s.Destroy()
	s.s = nil
	return err
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}
