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
	os.WriteFile(qfile, []byte("{\"question\":\"Who directed Inception?\"}\nnot json\n{\"question\":\"fails\"}\n"), 0o644)
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
	if len(lines) != 4 || lines[0] != "conc    requests  errors      req/s       p50       p95       p99       max       rss" ||
		!strings.HasPrefix(lines[1], "1 ") || !strings.HasPrefix(lines[2], "2 ") || lines[3] != "p99 stays under 1 s at every level tried" {
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
	if b, _ := os.ReadFile(filepath.Join(out, "summary.txt")); string(b) != lines[3]+"\n" {
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
	if s := loadSummary([]loadLevel{{Concurrency: 1, P99: 200}, {Concurrency: 4, P99: 1000.5}, {Concurrency: 8, P99: 3000}}); s != "p99 crosses 1 s at concurrency 4" {
		t.Error(s)
	}
	if s := loadSummary([]loadLevel{{Concurrency: 1, P99: 1000}}); s != "p99 stays under 1 s at every level tried" {
		t.Error(s)
	}
}

func TestWriteLoadCSV(t *testing.T) {
	dir := t.TempDir()
	lv := []loadLevel{{Concurrency: 2, Requests: 10, Errors: 1, Throughput: 4.56789, P50: 12.34, P95: 20, P99: 31.25, Max: 40}}
	rss := []rssSample{{At: 1500 * time.Millisecond, RSS: 3 << 19, C: 2}}
	if err := writeLoadCSV(dir, lv, rss); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"load.csv": "concurrency,requests,errors,throughput_rps,p50_ms,p95_ms,p99_ms,max_ms\n2,10,1,4.568,12.3,20.0,31.2,40.0\n",
		"rss.csv":  "seconds,concurrency,rss_mib\n1.5,2,1.5\n",
	} {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
}

func TestParseLevels(t *testing.T) {
	if l, err := ParseLevels("1, 4,16"); err != nil || len(l) != 3 || l[1] != 4 || l[2] != 16 {
		t.Errorf("%v %v", l, err)
	}
	for _, bad := range []string{"", "1,0", "2,x", "-1"} {
		if _, err := ParseLevels(bad); err == nil || !strings.Contains(err.Error(), "is not a positive integer") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestParseRequestOptions(t *testing.T) {
	if r, err := ParseRequestOptions(`"k":3,"shapley":"montecarlo"`); err != nil || *r.K != 3 || *r.Shapley != "montecarlo" {
		t.Errorf("%+v %v", r, err)
	}
	if r, err := ParseRequestOptions(""); err != nil || r.K != nil {
		t.Errorf("%+v %v", r, err)
	}
	if _, err := ParseRequestOptions(`"topk":3`); err == nil {
		t.Error("an unknown option was accepted")
	}
}

func TestLoadQuestionsBuiltinAndEmpty(t *testing.T) {
	if qs, err := LoadQuestions("", nil); err != nil || len(qs) != len(builtinLoadQuestions) {
		t.Errorf("%d %v", len(qs), err)
	}
	f := filepath.Join(t.TempDir(), "e.jsonl")
	os.WriteFile(f, []byte("{}\n"), 0o644)
	var stderr bytes.Buffer
	if _, err := LoadQuestions(f, &stderr); err == nil || !strings.Contains(err.Error(), "no questions") {
		t.Errorf("no questions: %v", err)
	}
}
