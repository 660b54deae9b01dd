package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// dmar bench load passes its flags through to bench.Load: the questions
// file, the request options, the API key, the levels and --out.
func TestBenchLoad(t *testing.T) {
	var mu sync.Mutex
	var bad []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz":
			w.Write([]byte(`{"status":"ready","checks":{}}`))
		case "/v1/retrieve":
			var b bytes.Buffer
			if _, err := b.ReadFrom(r.Body); err != nil {
				t.Error(err)
			}
			if body := b.String(); !strings.Contains(body, `"k":3`) || !strings.Contains(body, `"query":"Who directed Inception?"`) || r.Header.Get("Authorization") != "Bearer lk" {
				mu.Lock()
				bad = append(bad, body)
				mu.Unlock()
				w.WriteHeader(400)
				return
			}
			w.Write([]byte(`{"query":"x","results":[]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	qfile := filepath.Join(dir, "q.jsonl")
	if err := os.WriteFile(qfile, []byte("{\"question\":\"Who directed Inception?\"}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DMAR_API_KEY", "lk")
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), []string{"bench", "load", "--url", srv.URL, "--questions", qfile,
		"--levels", "1,2", "--duration", "150ms", "--options", `"k":3`, "--out", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "conc ") || !strings.HasPrefix(lines[1], "1 ") || !strings.HasPrefix(lines[2], "2 ") ||
		!strings.HasPrefix(lines[4], "saturated_rps=") || !strings.HasSuffix(lines[4], " p99_under_1s_up_to=2") {
		t.Fatalf("output:\n%s", stdout.String())
	}
	if f := strings.Fields(lines[1]); f[1] == "0" || f[2] != "0" {
		t.Errorf("level 1: %s (requests not as the flags say: %q)", lines[1], bad)
	}
	if !strings.Contains(stderr.String(), "q.jsonl:2 skipped") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "summary.txt")); err != nil {
		t.Error(err)
	}
	for _, args := range [][]string{{"--options", `"topk":3`}, {"--levels", "1,x"}, {"extra"}, {"--url", "ftp://x"}} {
		if err := Run(context.Background(), append([]string{"bench", "load", "--addr", "127.0.0.1:1"}, args...), &stdout, &stderr); !errors.As(err, new(usageError)) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}
