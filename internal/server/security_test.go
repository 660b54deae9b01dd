package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/server"
)

func hashOf(key string) string {
	s := sha256.Sum256([]byte(key))
	return hex.EncodeToString(s[:])
}

func send(h http.Handler, method, path, body string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1:8080" // a keyless server answers loopback Hosts only
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func TestAPIKeys(t *testing.T) {
	p, _ := testPipeline(t)
	const alice, bob = "alice-key-0123456789", "bob-key-0123456789abc"
	h := server.New(server.Config{Pipeline: p, APIKeys: []server.APIKey{
		{Name: "alice", SHA256: hashOf(alice)},
		{Name: "bob", SHA256: hashOf(bob), Rate: 0.5, Burst: 2},
	}})
	body := `{"text": "Inception"}`
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"no key", nil, 401},
		{"wrong key", map[string]string{"Authorization": "Bearer nope-0123456789"}, 401},
		{"the hash itself is not a key", map[string]string{"X-API-Key": hashOf(alice)}, 401},
		{"bearer", map[string]string{"Authorization": "Bearer " + alice}, 200},
		{"x-api-key", map[string]string{"X-API-Key": alice}, 200},
	} {
		w := send(h, "POST", "/v1/link", body, tc.header)
		if w.Code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, w.Code, w.Body, tc.want)
		}
		if w.Code == 401 && w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without WWW-Authenticate", tc.name)
		}
	}
	// Probes stay open.
	for _, path := range []string{"/healthz", "/readyz", "/openapi.json"} {
		if w := send(h, "GET", path, "", nil); w.Code != 200 {
			t.Errorf("%s without a key: %d", path, w.Code)
		}
	}
	if w := send(h, "GET", "/metrics", "", nil); w.Code != 401 {
		t.Errorf("/metrics without a key: %d", w.Code)
	}
	// bob: a burst of 2, then 429 with Retry-After; alice is unaffected.
	codes := []int{}
	var last *httptest.ResponseRecorder
	for i := 0; i < 4; i++ {
		last = send(h, "POST", "/v1/link", body, map[string]string{"X-API-Key": bob})
		codes = append(codes, last.Code)
	}
	if codes[0] != 200 || codes[1] != 200 || codes[2] != 429 || codes[3] != 429 {
		t.Errorf("bob's codes %v, want 200 200 429 429", codes)
	}
	if ra, err := strconv.Atoi(last.Header().Get("Retry-After")); err != nil || ra < 1 || ra > 2 {
		t.Errorf("429 Retry-After %q, want 1 or 2 seconds at 0.5/s", last.Header().Get("Retry-After"))
	}
	if !strings.Contains(last.Body.String(), `"rate_limited"`) {
		t.Errorf("429 body %s", last.Body)
	}
	if w := send(h, "POST", "/v1/link", body, map[string]string{"X-API-Key": alice}); w.Code != 200 {
		t.Errorf("alice after bob's limit: %d", w.Code)
	}
}

func TestCORS(t *testing.T) {
	p, _ := testPipeline(t)
	pre := map[string]string{"Origin": "https://app.example.org", "Access-Control-Request-Method": "POST"}
	// Off by default: no CORS headers at all, a preflight is not answered.
	off := server.New(server.Config{Pipeline: p})
	if w := send(off, "OPTIONS", "/v1/retrieve", "", pre); w.Header().Get("Access-Control-Allow-Origin") != "" || w.Code == 204 {
		t.Errorf("CORS off: %d %v", w.Code, w.Header())
	}
	on := server.New(server.Config{Pipeline: p, CORSOrigins: []string{"https://app.example.org"}})
	w := send(on, "OPTIONS", "/v1/retrieve", "", pre)
	if w.Code != 204 || w.Header().Get("Access-Control-Allow-Origin") != "https://app.example.org" || !strings.Contains(w.Header().Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight from an allowed origin: %d %v", w.Code, w.Header())
	}
	w = send(on, "POST", "/v1/link", `{"text":"Inception"}`, map[string]string{"Origin": "https://evil.example.com"})
	if w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("another origin got %q", w.Header().Get("Access-Control-Allow-Origin"))
	}
}

func TestLimits(t *testing.T) {
	h := router(t)
	big := `{"query": "` + strings.Repeat("a", 70<<10) + `"}`
	if w := do(t, h, "POST", "/v1/retrieve", big); w.Code != 413 {
		t.Errorf("70 KiB body: %d", w.Code)
	}
	long := `{"query": "` + strings.Repeat("ab ", 700) + `"}`
	if w := do(t, h, "POST", "/v1/retrieve", long); w.Code != 413 && w.Code != 400 {
		t.Errorf("2100-character query: %d %s", w.Code, w.Body)
	}
}

// The OpenAPI document declares the optional authentication and its errors
// on every route that needs a key.
func TestOpenAPIDocumentsAuth(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]struct{ Responses map[string]any } `json:"paths"`
		Components struct {
			SecuritySchemes map[string]any `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(server.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Components.SecuritySchemes) == 0 {
		t.Error("no securitySchemes")
	}
	for path, ops := range doc.Paths {
		if path == "/healthz" || path == "/readyz" || path == "/openapi.json" || path == "/" || path == "/ui/{file}" {
			continue // open: probes, this document, and the explorer page's files
		}
		for m, op := range ops {
			for _, code := range []string{"401", "429", "503"} {
				if _, ok := op.Responses[code]; !ok {
					t.Errorf("%s %s does not document %s", m, path, code)
				}
			}
		}
	}
}
