package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestBenchLoad(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz":
			w.Write([]byte(`{"status":"ready","checks":{}}`))
		case "/v1/retrieve":
			var body map[string]any
			_ = json.NewDecoder(r.Body).Decode(&body)
			q, _ := body["query"].(string)
			mu.Lock()
			seen[q]++
			mu.Unlock()
			if body["k"] != 3.0 || r.Header.Get("Authorization") != "Bearer lk" {
				w.WriteHeader(400)
				return
			}
			if q == "fails" {
				w.WriteHeader(500)
				w.Write([]byte(`{"error":{"code":"internal","message":"internal error"}}`))
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
	os.WriteFile(qfile, []byte("{\"question\":\"Who directed Inception?\"}\nnot json\n{\"question\":\"fails\"}\n"), 0o644)
	t.Setenv("DMAR_API_KEY", "lk")
	out := filepath.Join(dir, "out")
	var stdout, stderr bytes.Buffer
	err := Run(context.Background(), []string{"bench", "load", "--addr", strings.TrimPrefix(srv.URL, "http://"), "--questions", qfile,
		"--levels", "1,2", "--duration", "300ms", "--options", `"k":3`, "--pid", strconv.Itoa(os.Getpid()), "--out", out}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "conc ") || !strings.Contains(lines[0], "p99") ||
		!strings.HasPrefix(lines[1], "1 ") || !strings.HasPrefix(lines[2], "2 ") || lines[3] != "p99 stays under 1 s at every level tried" {
		t.Fatalf("output:\n%s", stdout.String())
	}
	if f := strings.Fields(lines[1]); f[2] == "0" || f[1] == f[2] {
		t.Errorf("level 1: %s requests, %s errors; want some of each: %s", f[1], f[2], lines[1])
	}
	if !strings.Contains(stderr.String(), "q.jsonl:2 skipped") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if seen["Who directed Inception?"] == 0 || seen["fails"] == 0 || len(seen) != 2 {
		t.Errorf("questions asked: %v", seen)
	}
	csv, _ := os.ReadFile(filepath.Join(out, "load.csv"))
	if rows := strings.Split(strings.TrimSpace(string(csv)), "\n"); len(rows) != 3 || rows[0] != "concurrency,requests,errors,throughput_rps,p50_ms,p95_ms,p99_ms,max_ms" {
		t.Errorf("load.csv:\n%s", csv)
	}
	for _, f := range []string{"rss.csv", "load.png", "summary.txt"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if err := Run(context.Background(), []string{"bench", "load", "--addr", "127.0.0.1:1", "--options", `"topk":3`}, &stdout, &stderr); !errors.As(err, new(usageError)) {
		t.Errorf("an unknown option: %v", err)
	}
}

func TestLoadSummary(t *testing.T) {
	if s := loadSummary([]loadLevel{{Concurrency: 1, P99: 200}, {Concurrency: 4, P99: 1000.5}, {Concurrency: 8, P99: 3000}}); s != "p99 crosses 1 s at concurrency 4" {
		t.Error(s)
	}
}
