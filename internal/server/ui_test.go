package server_test

import (
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/server"
	"github.com/dmar-kg/dmar/internal/ui"
)

// The explorer page answers without a key, keeps to its own origin, and
// opens no way around the key to the API.
func TestExplorerPageRoutes(t *testing.T) {
	p, _ := testPipeline(t)
	const key = "ui-key-0123456789abcdef"
	h := server.New(server.Config{Pipeline: p, APIKeys: []server.APIKey{{Name: "ui", SHA256: hashOf(key)}}})
	if w := send(h, "GET", "/", "", nil); w.Code != 302 || w.Header().Get("Location") != "/ui/" {
		t.Errorf("GET /: %d Location %q", w.Code, w.Header().Get("Location"))
	}
	for path, want := range map[string]string{"/ui/": "text/html", "/ui/app.js": "text/javascript", "/ui/graph.js": "text/javascript", "/ui/style.css": "text/css", "/ui/favicon.svg": "image/svg+xml"} {
		w := send(h, "GET", path, "", nil)
		if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), want) {
			t.Errorf("GET %s without a key: %d %q, want 200 %s", path, w.Code, w.Header().Get("Content-Type"), want)
			continue
		}
		csp := w.Header().Get("Content-Security-Policy")
		for _, d := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'"} {
			if !strings.Contains(csp, d) {
				t.Errorf("GET %s: Content-Security-Policy %q lacks %q", path, csp, d)
			}
		}
	}
	if w := send(h, "GET", "/ui/", "", nil); !strings.Contains(w.Body.String(), `src="vendor/cytoscape.min.js"`) || !strings.Contains(w.Body.String(), `src="app.js"`) {
		t.Errorf("the page does not load its scripts from its own folder:\n%.400s", w.Body)
	}
	lib := send(h, "GET", "/ui/"+ui.GraphLibrary, "", nil)
	if ui.HasGraphLibrary() != (lib.Code == 200) {
		t.Errorf("GET /ui/%s: %d, but HasGraphLibrary is %v", ui.GraphLibrary, lib.Code, ui.HasGraphLibrary())
	}
	// The page's paths are no way around the key to the API.
	for _, path := range []string{"/ui/../v1/entities/Q25191/subgraph", "/ui/%2e%2e/v1/entities/Q25191/subgraph", "/v1/entities/Q25191/subgraph"} {
		if w := send(h, "GET", path, "", nil); w.Code == 200 && strings.Contains(w.Body.String(), `"nodes"`) {
			t.Errorf("GET %s without a key answered the API: %.200s", path, w.Body)
		}
	}
	if w := send(h, "GET", "/v1/entities/Q25191/subgraph", "", map[string]string{"Authorization": "Bearer " + key}); w.Code != 200 {
		t.Errorf("the API with the key: %d %s", w.Code, w.Body)
	}
	if w := send(h, "GET", "/ui/nothing-here.js", "", nil); w.Code != 404 {
		t.Errorf("a file the page lacks: %d", w.Code)
	}
}
