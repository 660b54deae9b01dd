package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/datapath"
)

// longQuery is a question of about 2,000 characters made of codexm-film's
// entity labels, so that it links to dozens of entities: the shape of the
// request that used to pin a CPU past its timeout (issue 13, defect 2).
func longQuery(t *testing.T) string {
	t.Helper()
	dir, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Skipf("codexm-film: %v", err)
	}
	f, err := os.Open(filepath.Join(dir, "entities.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e struct{ Label string }
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Label == "" || strings.HasPrefix(e.Label, "Q") {
			continue
		}
		if b.Len()+len(e.Label)+2 > 1990 {
			break
		}
		b.WriteString(e.Label)
		b.WriteString(", ")
	}
	return b.String()
}

func slowRequest(t *testing.T) string {
	q, _ := json.Marshal(longQuery(t))
	return `{"method":"paper","query":` + string(q) + `,"shapley":"montecarlo","samples":10000}`
}

// The request timeout holds for the costliest request a client can send: a
// server with a 2 s timeout (and no cost limit in the way) answers 503 within
// the timeout plus a small margin, instead of running for tens of seconds and
// closing the connection; with the default cost limit the same request is
// refused at once with 422 naming samples.
func TestRequestTimeoutIsEnforced(t *testing.T) {
	body := slowRequest(t)
	p := startDmar(t, nil, "--request-timeout", "2s", "--backend-timeout", "2s", "--max-request-cost", "1000000000000")
	start := time.Now()
	r := p.post("/v1/retrieve", body)
	took := time.Since(start)
	if r.err != nil || r.code != 503 || r.retryAfter == "" {
		t.Fatalf("over its timeout: %d %v %.300s, want 503 with Retry-After", r.code, r.err, r.body)
	}
	if took > 3500*time.Millisecond {
		t.Errorf("answered after %s with a 2 s timeout", took)
	}

	q := startDmar(t, nil)
	start = time.Now()
	r = q.post("/v1/retrieve", body)
	if r.err != nil || r.code != 422 || !strings.Contains(r.body, `"field":"samples"`) {
		t.Fatalf("over the cost limit: %d %v %.300s, want 422 naming samples", r.code, r.err, r.body)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the cost limit refused the request after %s: it must be decided before the work", took)
	}
}

// SIGTERM with requests that outlive the drain limit: every cut-off client
// gets a 503 (not a closed connection), the process exits 0 (the models are
// closed only after every handler has returned: it used to die with SIGSEGV
// inside Session.Run), and the drain keeps to its limit.
func TestShutdownCutsOffSlowRequestsCleanly(t *testing.T) {
	body := slowRequest(t)
	for run := 0; run < 2; run++ {
		p := startDmar(t, nil, "--shutdown-timeout", "2s", "--max-request-cost", "1000000000000")
		const inflight = 8
		results := make(chan reply, inflight)
		for i := 0; i < inflight; i++ {
			go func() { results <- p.post("/v1/retrieve", body) }()
		}
		time.Sleep(700 * time.Millisecond)
		start := time.Now()
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < inflight; i++ {
			r := <-results
			if r.err != nil || r.code != 503 {
				t.Errorf("run %d: a request cut off by shutdown: %d %v %.200s, want 503", run, r.code, r.err, r.body)
			}
		}
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("run %d: dmar did not exit 10 s after SIGTERM", run)
		}
		took := time.Since(start)
		if p.exitErr != nil {
			t.Errorf("run %d: exit after SIGTERM: %v\n%s", run, p.exitErr, p.logs)
		}
		if took > 3500*time.Millisecond {
			t.Errorf("run %d: exited %s after SIGTERM with a 2 s drain limit", run, took)
		}
		if logs := p.logs.String(); !strings.Contains(logs, "cutting off requests still running") || strings.Contains(logs, "left open") {
			t.Errorf("run %d: the log does not show a clean cut-off:\n%s", run, logs)
		}
	}
}
