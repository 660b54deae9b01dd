package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/dmar-kg/dmar/internal/server"
)

// lockedBuffer is a log sink safe for concurrent handlers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func TestRequestIDAndAccessLog(t *testing.T) {
	p, _ := testPipeline(t)
	var logs lockedBuffer
	const key = "super-secret-api-key-42"
	h := server.New(server.Config{Pipeline: p, Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		APIKeys: []server.APIKey{{Name: "ci", SHA256: hashOf(key)}}})
	for _, tc := range []struct{ in, want string }{
		{"abc-123.x:y_z", "abc-123.x:y_z"},
		{"", ""},
		{"has space", ""},
		{strings.Repeat("a", 200), ""},
		{`"><script>`, ""},
	} {
		w := send(h, "POST", "/v1/retrieve", `{"query": "Who directed Inception?", "k": 2}`, map[string]string{"X-Request-ID": tc.in, "Authorization": "Bearer " + key})
		got := w.Header().Get("X-Request-ID")
		if w.Code != 200 || got == "" || (tc.want != "" && got != tc.want) || (tc.want == "" && got == tc.in) {
			t.Errorf("incoming id %q: status %d, returned %q", tc.in, w.Code, got)
		}
		if !strings.Contains(logs.String(), `"request_id":"`+got+`"`) {
			t.Errorf("no access-log line for request %s", got)
		}
		if strings.Contains(w.Body.String(), key) {
			t.Errorf("a response contains the API key")
		}
	}
	send(h, "GET", "/v1/entities/Q25188/subgraph?hops=1", "", map[string]string{"X-API-Key": key})
	send(h, "GET", "/v1/entities/Q25188/subgraph", "", map[string]string{"X-API-Key": "wrong-" + key})
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if rec["msg"] == "request" && (rec["route"] == nil || rec["status"] == nil || rec["duration_ms"] == nil) {
			t.Errorf("access log line lacks route/status/duration: %s", line)
		}
	}
	if strings.Contains(logs.String(), key) {
		t.Errorf("the log contains the API key:\n%s", logs.String())
	}
	if strings.Contains(string(server.OpenAPI()), key) {
		t.Error("openapi.json contains the key")
	}
}
