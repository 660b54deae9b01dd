package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

// seedState links the snapshots of the shared state folder (keyed by
// content, so valid in any folder) into dir, so that a fresh --state does
// not link and embed the demo corpus again; without them it does.
func seedState(t *testing.T, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(onnxtest.CacheDir(), "state", "*.gob"))
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() > 16<<20 {
			continue // codexm's index: not the demo's
		}
		dst := filepath.Join(dir, filepath.Base(f))
		if err := os.Link(f, dst); err != nil {
			b, err := os.ReadFile(f)
			if err == nil {
				err = os.WriteFile(dst, b, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

func (p *dmarProc) send(method, path, body string) reply {
	req, _ := http.NewRequest(method, p.url+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return doReq(req)
}

// kill9 ends the server with SIGKILL: no drain, no deferred close.
func (p *dmarProc) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("dmar serve did not die on SIGKILL")
	}
}

func retrievedIDs(t *testing.T, p *dmarProc, query string) []string {
	t.Helper()
	r := p.post("/v1/retrieve", `{"query": "`+query+`", "k": 10, "p": 20}`)
	if r.code != 200 {
		t.Fatalf("retrieve: %d %s", r.code, r.body)
	}
	var res api.RetrieveResponse
	if err := json.Unmarshal([]byte(r.body), &res); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range res.Results {
		ids = append(ids, d.ID)
	}
	return ids
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestDocumentsSurviveKill9 runs the real binary with --state over
// codexm-film: a batch PUT and a DELETE are acknowledged, the process is
// killed with SIGKILL right after the answers, and a restart serves them:
// the new documents are fetched and found by retrieval, the deleted one is
// gone. Then a torn tail (a write cut off by a crash) is discarded on
// start with a log line, and the acknowledged writes stay.
func TestDocumentsSurviveKill9(t *testing.T) {
	state := t.TempDir()
	seedState(t, state)
	p := startDmar(t, nil, "--state", state)
	put := `{"documents": [
		{"id": "live-quux", "title": "Quuxalot Returns", "text": "Quuxalot Returns is a 2031 film directed by Christopher Nolan, shot in London.", "metadata": {"source": "e2e"}},
		{"id": "live-zorb", "title": "Zorblax", "text": "Zorblax is a documentary about the river Thames."}]}`
	r := p.send("PUT", "/v1/documents", put)
	if r.code != 200 || !strings.Contains(r.body, `"created":2`) {
		t.Fatalf("put: %d %s", r.code, r.body)
	}
	victim := "Q25188" // a corpus document (Inception)
	if r := p.send("DELETE", "/v1/documents/"+victim, ""); r.code != 200 {
		t.Fatalf("delete %s: %d %s", victim, r.code, r.body)
	}
	p.kill9(t)

	q := startDmar(t, nil, "--state", state)
	r = q.get("/v1/documents/live-quux")
	var d api.StoredDocument
	if r.code != 200 || json.Unmarshal([]byte(r.body), &d) != nil || !strings.Contains(d.Text, "Quuxalot") || string(d.Metadata) != `{"source":"e2e"}` {
		t.Fatalf("after kill -9, get live-quux: %d %s", r.code, r.body)
	}
	linked := false
	for _, e := range d.Entities {
		linked = linked || e.QID == "Q25191"
	}
	if !linked {
		t.Errorf("live-quux lost its link to Christopher Nolan: %+v", d.Entities)
	}
	if ids := retrievedIDs(t, q, "Quuxalot Returns"); !contains(ids, "live-quux") {
		t.Errorf("after kill -9, retrieval does not find live-quux: %v", ids)
	}
	if r := q.get("/v1/documents/" + victim); r.code != 404 || !strings.Contains(r.body, victim) {
		t.Errorf("after kill -9, the deleted %s: %d %s, want 404 naming it", victim, r.code, r.body)
	}
	q.kill9(t)

	// A crash in the middle of a write leaves a partial record at the end.
	logs, _ := filepath.Glob(filepath.Join(state, "documents", "*", docstore.LogFile))
	if len(logs) != 1 {
		t.Fatalf("document logs under %s: %v", state, logs)
	}
	f, err := os.OpenFile(logs[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte{200, 1, 0, 0, 9, 9, 9, 9, 'p', 'a', 'r', 't'}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	s := startDmar(t, nil, "--state", state)
	if r := s.get("/v1/documents/live-zorb"); r.code != 200 {
		t.Errorf("after a torn tail, get live-zorb: %d %s", r.code, r.body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.logs.String(), "torn tail") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(s.logs.String(), "torn tail") {
		t.Errorf("the torn tail was not logged:\n%s", tail(s.logs.String(), 2000))
	}
	// The server writes on after the discarded tail.
	if r := s.send("PUT", "/v1/documents", `{"documents": [{"id": "live-after", "text": "written after the torn tail"}]}`); r.code != 200 {
		t.Errorf("put after the torn tail: %d %s", r.code, r.body)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestDocsCommand drives dmar docs put, get and delete against a real
// dmar serve.
func TestDocsCommand(t *testing.T) {
	state := t.TempDir()
	seedState(t, state)
	p := startDmar(t, nil, "--state", state)
	file := filepath.Join(t.TempDir(), "docs.jsonl")
	lines := `{"id": "cli-1", "title": "Glorbix", "text": "Glorbix is a film by Christopher Nolan."}` + "\n" + `{"id": "", "text": "no id"}` + "\n"
	if err := os.WriteFile(file, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		out, err := exec.Command(dmarBinary(t), args...).CombinedOutput()
		return string(out), err
	}
	out, err := run("docs", "put", "--url", p.url, file)
	if err != nil || !strings.Contains(out, "created 1, updated 0, unchanged 0, rejected 1") || !strings.Contains(out, "documents[1].id") {
		t.Fatalf("docs put: %v\n%s", err, out)
	}
	if out, err := run("docs", "get", "--url", p.url, "cli-1"); err != nil || !strings.Contains(out, `"Glorbix"`) || !strings.Contains(out, `"Q25191"`) {
		t.Errorf("docs get: %v\n%s", err, out)
	}
	if out, err := run("docs", "delete", "--url", p.url, "cli-1"); err != nil || !strings.Contains(out, "deleted 1") {
		t.Errorf("docs delete: %v\n%s", err, out)
	}
	if out, err := run("docs", "delete", "--url", p.url, "cli-1"); err == nil || !strings.Contains(out, "404") || !strings.Contains(out, "cli-1") {
		t.Errorf("docs delete of a deleted id: %v\n%s, want a failure naming the 404 and the id", err, out)
	}
}
