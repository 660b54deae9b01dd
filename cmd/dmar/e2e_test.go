package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

// End-to-end tests run the real dmar binary as a child process.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// TestMain removes the binary the end-to-end tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// dmarBinary builds cmd/dmar once per test run.
func dmarBinary(t *testing.T) string {
	t.Helper()
	onnxtest.NeedFile(t, onnxtest.Config().LibPath, "the ONNX Runtime library")
	onnxtest.NeedFile(t, filepath.Join(onnxtest.EncoderDir(), "manifest.json"), "the sentence encoder")
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dmar-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "dmar")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// syncBuffer collects a child's output safely.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

type dmarProc struct {
	cmd     *exec.Cmd
	url     string
	logs    *syncBuffer
	done    chan struct{}
	exitErr error
}

// startDmar runs `dmar serve` on a free loopback port over codexm-film with
// extra environment and flags, and waits until it serves.
func startDmar(t *testing.T, env []string, args ...string) *dmarProc {
	t.Helper()
	bin := dmarBinary(t)
	data, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Skipf("codexm-film: %v", err)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--data", data}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	p := &dmarProc{cmd: cmd, logs: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "dmar: serving on "); ok {
				urlc <- u
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	go func() { p.exitErr = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case p.url = <-urlc:
	case <-p.done:
		t.Fatalf("dmar serve exited: %v\n%s", p.exitErr, p.logs)
	case <-time.After(3 * time.Minute):
		t.Fatalf("dmar serve did not start in 3 minutes\n%s", p.logs)
	}
	return p
}

type reply struct {
	code       int
	retryAfter string
	body       string
	err        error
}

func (p *dmarProc) post(path, body string, header ...string) reply {
	req, _ := http.NewRequest("POST", p.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return doReq(req)
}

func (p *dmarProc) get(path string, header ...string) reply {
	req, _ := http.NewRequest("GET", p.url+path, http.NoBody)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return doReq(req)
}

var client = &http.Client{Timeout: 60 * time.Second}

func mustGet(url string) *http.Request {
	req, err := http.NewRequest("GET", url, http.NoBody)
	if err != nil {
		panic(err)
	}
	return req
}

func doReq(req *http.Request) reply {
	resp, err := client.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), body: string(b)}
}

const heavy = `{"method":"paper","query":"Who directed Inception and which actors starred in films by Christopher Nolan?","n":200,"m":6,"p":60,"k":20,"hops":2,"max_nodes":512,"shapley":"montecarlo","samples":3000}`

// SIGTERM: the requests in flight finish with 200, new ones get 503 with
// Retry-After, the process exits 0 within the bound; and no secret from the
// environment or the request headers reaches the log or a response.
func TestGracefulShutdownOnSIGTERM(t *testing.T) {
	secrets := map[string]string{"DMAR_NEO4J_PASSWORD": "neo4j-secret-0x1", "DMAR_CHAT_API_KEY": "chat-secret-0x2", "DMAR_WEAVIATE_API_KEY": "weaviate-secret-0x3"}
	const apiKey = "client-api-key-0123456789"
	cfg := filepath.Join(t.TempDir(), "dmar.yaml")
	if err := os.WriteFile(cfg, []byte("server:\n  auth:\n    keys:\n      - name: e2e\n        sha256: "+sha256Hex(apiKey)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"DMAR_CONFIG=" + cfg}
	for k, v := range secrets {
		env = append(env, k+"="+v)
	}
	p := startDmar(t, env, "--shutdown-timeout", "30s", "--pprof", "--pprof-addr", "127.0.0.1:0")
	auth := []string{"Authorization", "Bearer " + apiKey}
	// pprof answers on its own loopback listener, not on the API's port.
	// (stderr is copied asynchronously: wait for the line.)
	pprofRE := regexp.MustCompile(`"msg":"pprof serving","addr":"(http://127\.0\.0\.1:\d+/debug/pprof/)"`)
	m := pprofRE.FindStringSubmatch(p.logs.String())
	for end := time.Now().Add(10 * time.Second); m == nil && time.Now().Before(end); m = pprofRE.FindStringSubmatch(p.logs.String()) {
		time.Sleep(50 * time.Millisecond)
	}
	if m == nil {
		t.Fatalf("no pprof listener in the log:\n%s", p.logs)
	}
	if r := doReq(mustGet(m[1])); r.code != 200 || !strings.Contains(r.body, "goroutine") {
		t.Errorf("pprof index: %d %v", r.code, r.err)
	}
	if r := p.get("/debug/pprof/", auth...); r.code != 404 {
		t.Errorf("pprof on the API port: %d", r.code)
	}
	var bodies []string
	for _, path := range []string{"/openapi.json", "/readyz", "/healthz", "/metrics"} {
		r := p.get(path, auth...)
		if r.code != 200 {
			t.Fatalf("GET %s: %d %v", path, r.code, r.err)
		}
		bodies = append(bodies, r.body)
	}
	// Requests in flight when SIGTERM comes.
	const inflight = 6
	results := make(chan reply, inflight)
	for i := 0; i < inflight; i++ {
		go func() { results <- p.post("/v1/retrieve", heavy, auth...) }()
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Wait until the drain has begun (a fixed sleep raced it on a loaded
	// machine: a request sent before the signal was handled got 200).
	for end := time.Now().Add(10 * time.Second); !strings.Contains(p.logs.String(), `"msg":"draining: new requests get 503"`) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	// New requests while draining: 503 with Retry-After (or a refused
	// connection once the listener has closed).
	drained := 0
	for i := 0; i < 5; i++ {
		r := p.post("/v1/retrieve", `{"query":"Inception"}`, auth...)
		switch {
		case r.err != nil:
		case r.code == 503 && r.retryAfter != "":
			drained++
		default:
			t.Errorf("a new request while draining: %d %q %s", r.code, r.retryAfter, r.body)
		}
	}
	if drained == 0 {
		t.Errorf("no new request got 503 while draining")
	}
	for i := 0; i < inflight; i++ {
		r := <-results
		if r.err != nil || r.code != 200 {
			t.Errorf("a request in flight at SIGTERM: %d %v %.200s", r.code, r.err, r.body)
		}
		bodies = append(bodies, r.body)
	}
	select {
	case <-p.done:
	case <-time.After(40 * time.Second):
		t.Fatal("dmar did not exit 40 s after SIGTERM")
	}
	if p.exitErr != nil {
		t.Errorf("exit after SIGTERM: %v", p.exitErr)
	}
	t.Logf("drained in %s; %d new requests got 503", time.Since(start).Round(time.Millisecond), drained)
	logs := p.logs.String()
	for _, want := range []string{`"msg":"draining: new requests get 503"`, `"msg":"shut down"`, `"request_id"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %s", want)
		}
	}
	for name, s := range secrets {
		for _, out := range append(bodies, logs) {
			if strings.Contains(out, s) {
				t.Errorf("the secret of %s was logged or returned", name)
			}
		}
	}
	if strings.Contains(logs, apiKey) || strings.Contains(strings.Join(bodies, ""), apiKey) {
		t.Error("the API key was logged or returned")
	}
}
