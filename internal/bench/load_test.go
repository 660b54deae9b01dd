package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// loadServer answers /readyz, and /v1/retrieve with 500 for the question
// "fails", 400 unless k is 3 and the key lk is sent; seen counts questions.
func loadServer(t *testing.T) (*httptest.Server, func() map[string]int) {
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
	t.Cleanup(srv.Close)
	return srv, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

func TestLoadRun(t *testing.T) {
	srv, seen := loadServer(t)
	dir := t.TempDir()
	qfile := filepath.Join(dir, "q.jsonl")
	if err := os.WriteFile(qfile, []byte("{\"question\":\"Who directed Inception?\"}\nnot json\n{\"question\":\"fails\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	qs, err := LoadQuestions(qfile, &stderr)
	if err != nil || len(qs) != 2 {
		t.Fatalf("questions %q: %v", qs, err)
	}
	if stderr.String() != "dmar bench load: "+qfile+":2 skipped (no question field)\n" {
		t.Errorf("stderr: %q", stderr.String())
	}
	client, err := LoadClient(strings.TrimPrefix(srv.URL, "http://"), 5*time.Second, "lk")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := ParseRequestOptions(`"k":3`)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	l := Load{Client: client, Template: tmpl, Questions: qs, Levels: []int{1, 2}, Duration: 600 * time.Millisecond, PID: os.Getpid(), Out: out}
	if err := l.Run(context.Background(), &stdout); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 5 || lines[0] != "conc    requests  errors      req/s       p50       p95       p99       max       rss" ||
		!strings.HasPrefix(lines[1], "1 ") || !strings.HasPrefix(lines[2], "2 ") || lines[3] != "p99 stays under 1 s at every level tried" ||
		!strings.HasPrefix(lines[4], "saturated_rps=") || !strings.HasSuffix(lines[4], " p99_under_1s_up_to=2") {
		t.Fatalf("output:\n%s", stdout.String())
	}
	if f := strings.Fields(lines[1]); f[2] == "0" || f[1] == f[2] || !strings.HasSuffix(f[4], "ms") || !strings.HasSuffix(f[8], "M") || f[8] == "0M" {
		t.Errorf("level 1: want some requests and some errors, latencies in ms and an RSS: %s", lines[1])
	}
	if s := seen(); s["Who directed Inception?"] == 0 || s["fails"] == 0 || len(s) != 2 {
		t.Errorf("questions asked: %v", s)
	}
	csv, _ := os.ReadFile(filepath.Join(out, "load.csv"))
	if rows := strings.Split(strings.TrimSpace(string(csv)), "\n"); len(rows) != 3 || rows[0] != "concurrency,requests,errors,throughput_rps,p50_ms,p95_ms,p99_ms,max_ms" {
		t.Errorf("load.csv:\n%s", csv)
	}
	rss, _ := os.ReadFile(filepath.Join(out, "rss.csv"))
	if rows := strings.Split(strings.TrimSpace(string(rss)), "\n"); len(rows) < 2 || rows[0] != "seconds,concurrency,rss_mib" {
		t.Errorf("rss.csv:\n%s", rss)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "summary.txt")); string(b) != lines[3]+"\n"+lines[4]+"\n" {
		t.Errorf("summary.txt: %q", b)
	}
	if st, err := os.Stat(filepath.Join(out, "load.png")); err != nil || st.Size() == 0 {
		t.Errorf("load.png: %v", err)
	}
}

func TestLoadRunNotReady(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	client, err := LoadClient(srv.URL, time.Second, "")
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	err = Load{Client: client, Levels: []int{1}, Duration: time.Millisecond}.Run(context.Background(), &stdout)
	if err == nil || !strings.Contains(err.Error(), "is not ready") || stdout.Len() != 0 {
		t.Errorf("err %v, stdout %q", err, stdout.String())
	}
}

func TestLoadSummary(t *testing.T) {
	for _, c := range []struct {
		levels []loadLevel
		want   string
	}{
		{[]loadLevel{{Concurrency: 1, Requests: 9, P99: 200, Throughput: 5}, {Concurrency: 4, Requests: 9, P99: 1000.5, Throughput: 12.5}, {Concurrency: 8, Requests: 9, P99: 3000, Throughput: 9}},
			"p99 crosses 1 s at concurrency 4\nsaturated_rps=12.50 p99_under_1s_up_to=1"},
		{[]loadLevel{{Concurrency: 1, Requests: 3, P99: 1000, Throughput: 3}},
			"p99 stays under 1 s at every level tried\nsaturated_rps=3.00 p99_under_1s_up_to=1"},
		// A level whose every request failed has no p99 to trust.
		{[]loadLevel{{Concurrency: 2, Requests: 4, Errors: 4}, {Concurrency: 4, Requests: 4, P99: 10, Throughput: 1}},
			"p99 crosses 1 s at concurrency 2\nsaturated_rps=1.00 p99_under_1s_up_to=0"},
		// Under 1 s again after crossing does not count.
		{[]loadLevel{{Concurrency: 1, Requests: 2, P99: 10, Throughput: 2}, {Concurrency: 2, Requests: 2, P99: 1500, Throughput: 2}, {Concurrency: 4, Requests: 2, P99: 900, Throughput: 4}},
			"p99 crosses 1 s at concurrency 2\nsaturated_rps=4.00 p99_under_1s_up_to=1"},
	} {
		if s := loadSummary(c.levels); s != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.levels, s, c.want)
		}
	}
}
