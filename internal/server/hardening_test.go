package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/server"
)

// raw sends a request with exactly the given headers (no default Content-Type).
func raw(h http.Handler, method, target, body string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func errorOf(t *testing.T, w *httptest.ResponseRecorder) api.ErrorDetail {
	t.Helper()
	var b api.ErrorBody
	if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil || b.Error.Code == "" {
		t.Fatalf("not an error body (%d): %.300s", w.Code, w.Body)
	}
	return b.Error
}

// A request body must be declared JSON: a page on any site can POST
// text/plain (or a Blob with no type) without a CORS preflight.
func TestBodiesMustBeJSON(t *testing.T) {
	h := router(t)
	const local = "http://127.0.0.1:8080"
	for _, c := range []struct {
		ct   string
		want int
	}{
		{"application/json", 200},
		{"application/json; charset=utf-8", 200},
		{"Application/JSON;charset=UTF-8", 200},
		{"", 415},
		{"text/plain", 415},
		{"text/plain;charset=UTF-8", 415},
		{"application/x-www-form-urlencoded", 415},
		{"multipart/form-data; boundary=x", 415},
		{"application/jsonx", 415},
		{"application/json; charset=latin1", 415},
		{"application/json;;", 415},
	} {
		for _, path := range []string{"/v1/retrieve", "/v1/link"} {
			body := `{"query": "Inception"}`
			if path == "/v1/link" {
				body = `{"text": "Inception"}`
			}
			hdr := map[string]string{}
			if c.ct != "" {
				hdr["Content-Type"] = c.ct
			}
			w := raw(h, "POST", local+path, body, hdr)
			if w.Code != c.want {
				t.Errorf("%s with Content-Type %q: %d, want %d: %.200s", path, c.ct, w.Code, c.want, w.Body)
				continue
			}
			if c.want == 415 {
				if e := errorOf(t, w); e.Code != "unsupported_media_type" || !strings.Contains(e.Message, "application/json") {
					t.Errorf("415 error %+v", e)
				}
			}
		}
	}
}

// With no API key configured only loopback Host values are answered (DNS
// rebinding); Config.AllowedHosts adds names.
func TestHostMustBeLoopbackWithoutKeys(t *testing.T) {
	p, _ := testPipeline(t)
	open := server.New(server.Config{Pipeline: p})
	for _, c := range []struct {
		host string
		want int
	}{
		{"127.0.0.1", 200}, {"127.0.0.1:8080", 200}, {"127.9.8.7:1", 200}, {"localhost", 200}, {"LocalHost:8080", 200},
		{"localhost.:80", 200}, {"[::1]", 200}, {"[::1]:8080", 200},
		{"evil.example.com", 403}, {"evil.example.com:8080", 403}, {"127.0.0.1.evil.example.com", 403}, {"localhost.evil.example.com", 403},
		{"10.0.0.1:8080", 403}, {"[::2]:8080", 403}, {"0.0.0.0:8080", 403}, {"", 403}, {strings.Repeat("h", 5000), 403},
	} {
		for _, path := range []string{"/healthz", "/metrics"} {
			w := raw(open, "GET", path, "", map[string]string{"Host": c.host})
			if w.Code != c.want {
				t.Errorf("Host %.40q on %s: %d, want %d", c.host, path, w.Code, c.want)
				continue
			}
			if c.want == 403 {
				if e := errorOf(t, w); e.Code != "forbidden" || len(e.Message) > 300 {
					t.Errorf("Host %.40q: error %.300v", c.host, e)
				}
			}
		}
	}
	listed := server.New(server.Config{Pipeline: p, AllowedHosts: []string{"dmar.internal"}})
	for host, want := range map[string]int{"dmar.internal": 200, "DMAR.internal:8080": 200, "127.0.0.1": 200, "evil.example.com": 403} {
		if w := raw(listed, "GET", "/healthz", "", map[string]string{"Host": host}); w.Code != want {
			t.Errorf("allowed hosts [dmar.internal], Host %q: %d, want %d", host, w.Code, want)
		}
	}
	anyHost := server.New(server.Config{Pipeline: p, AllowedHosts: []string{"*"}})
	if w := raw(anyHost, "GET", "/healthz", "", map[string]string{"Host": "evil.example.com"}); w.Code != 200 {
		t.Errorf(`allowed hosts ["*"]: %d`, w.Code)
	}
	// With keys, a key is the protection: any Host is answered.
	keyed := server.New(server.Config{Pipeline: p, APIKeys: []server.APIKey{{Name: "a", SHA256: hashOf("k-0123456789abcdef")}}})
	if w := raw(keyed, "GET", "/healthz", "", map[string]string{"Host": "dmar.example.com"}); w.Code != 200 {
		t.Errorf("with API keys, another Host: %d", w.Code)
	}
}

// A known path with the wrong method is 405 with Allow; HEAD is answered
// wherever GET is.
func TestMethodNotAllowedAndHead(t *testing.T) {
	h := router(t)
	for _, c := range []struct{ method, path, allow string }{
		{"GET", "/v1/retrieve", "POST"},
		{"PUT", "/v1/link", "POST"},
		{"DELETE", "/v1/entities/Q25191/subgraph", "GET, HEAD"},
		{"POST", "/healthz", "GET, HEAD"},
		{"ZZA", "/metrics", "GET, HEAD"},
	} {
		w := do(t, h, c.method, c.path, "")
		if w.Code != 405 || w.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow %q, want 405 Allow %q", c.method, c.path, w.Code, w.Header().Get("Allow"), c.allow)
			continue
		}
		if e := errorOf(t, w); e.Code != "method_not_allowed" {
			t.Errorf("%s %s: %+v", c.method, c.path, e)
		}
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/openapi.json", "/v1/entities/Q25191/subgraph"} {
		if w := do(t, h, "HEAD", path, ""); w.Code != 200 {
			t.Errorf("HEAD %s: %d", path, w.Code)
		}
	}
	if w := do(t, h, "GET", "/v2/nothing", ""); w.Code != 404 {
		t.Errorf("unknown path: %d", w.Code)
	}
}

// The Authorization scheme is case-insensitive (RFC 9110 §11.1).
func TestBearerSchemeAnyCase(t *testing.T) {
	p, _ := testPipeline(t)
	const key = "case-key-0123456789"
	h := server.New(server.Config{Pipeline: p, APIKeys: []server.APIKey{{Name: "a", SHA256: hashOf(key)}}})
	for _, auth := range []string{"Bearer " + key, "bearer " + key, "BEARER " + key, "bEaReR   " + key} {
		if w := send(h, "POST", "/v1/link", `{"text": "Inception"}`, map[string]string{"Authorization": auth}); w.Code != 200 {
			t.Errorf("Authorization %q: %d", strings.Replace(auth, key, "KEY", 1), w.Code)
		}
	}
	if w := send(h, "POST", "/v1/link", `{"text": "Inception"}`, map[string]string{"Authorization": "Basic " + key}); w.Code != 401 {
		t.Errorf("Basic scheme: %d", w.Code)
	}
}

// Repeated wrong keys from one address are answered 429 with a growing
// Retry-After; other addresses are not affected; a right key after the
// block clears the count; the table of addresses is bounded.
func TestWrongKeyBackoff(t *testing.T) {
	p, _ := testPipeline(t)
	const key = "backoff-key-0123456789"
	h := server.New(server.Config{Pipeline: p, APIKeys: []server.APIKey{{Name: "a", SHA256: hashOf(key)}}})
	from := func(addr, k string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/v1/link", strings.NewReader(`{"text": "Inception"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", k)
		req.Header.Set("X-Forwarded-For", "198.51.100.77") // not trusted
		req.RemoteAddr = addr
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	const mallory, alice = "203.0.113.9:4000", "192.0.2.1:5000"
	for i := 0; i < server.AuthFreeFailures; i++ {
		if w := from(mallory, "wrong-0123456789"); w.Code != 401 {
			t.Fatalf("wrong key %d: %d", i+1, w.Code)
		}
	}
	w := from(mallory, key) // blocked, even with the right key
	if w.Code != 429 || w.Header().Get("Retry-After") != "1" || errorOf(t, w).Code != "rate_limited" {
		t.Fatalf("after %d wrong keys: %d Retry-After %q", server.AuthFreeFailures, w.Code, w.Header().Get("Retry-After"))
	}
	if w := from(alice, key); w.Code != 200 {
		t.Errorf("another address: %d", w.Code)
	}
	time.Sleep(1100 * time.Millisecond)
	if w := from(mallory, "wrong-0123456789"); w.Code != 401 {
		t.Fatalf("after the block, a wrong key: %d", w.Code)
	}
	w = from(mallory, "wrong-0123456789")
	if ra, _ := strconv.Atoi(w.Header().Get("Retry-After")); w.Code != 429 || ra != 2 {
		t.Fatalf("the next block: %d Retry-After %q, want 429 and 2", w.Code, w.Header().Get("Retry-After"))
	}
	// Bounded: many addresses, each with one wrong key.
	for i := 0; i < server.AuthTrackedClients+500; i++ {
		from("10."+strconv.Itoa(i>>16&255)+"."+strconv.Itoa(i>>8&255)+"."+strconv.Itoa(i&255)+":1", "wrong-0123456789")
	}
	if n := server.TrackedAuthClients(h); n > server.AuthTrackedClients {
		t.Errorf("%d addresses tracked, the bound is %d", n, server.AuthTrackedClients)
	}
}

// The OpenAPI document declares the Host and Content-Type refusals and
// every error code.
func TestOpenAPIDocumentsHardening(t *testing.T) {
	var doc struct {
		Paths      map[string]map[string]struct{ Responses map[string]any } `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(server.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	for path, ops := range doc.Paths {
		for m, op := range ops {
			if _, ok := op.Responses["403"]; !ok {
				t.Errorf("%s %s does not document 403", m, path)
			}
			if _, ok := op.Responses["415"]; m == "post" && !ok {
				t.Errorf("%s %s does not document 415", m, path)
			}
		}
	}
	enum := strings.Join(doc.Components.Schemas["ErrorDetail"].Properties["code"].Enum, " ")
	for _, c := range []string{api.CodeInvalid, api.CodeUnauthorized, api.CodeForbidden, api.CodeNotFound, api.CodeBadMethod, api.CodeTooLarge,
		api.CodeBadMediaType, api.CodeUnprocessable, api.CodeRateLimited, api.CodeInternal, api.CodeUnavailable} {
		if !strings.Contains(" "+enum+" ", " "+c+" ") {
			t.Errorf("ErrorDetail.code does not list %s", c)
		}
	}
}
