// Package ui is the explorer page that dmar serve answers at / and /ui/:
// a few static files embedded in the binary, which call the REST API of
// the server that served them and nothing else. The graph is drawn with
// cytoscape.js, which the setup step (scripts/setup/40-ui.sh) fetches from
// npm into static/vendor/ before the build; without it the page still
// answers and says that the drawing library is missing.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var files embed.FS

// GraphLibrary is the drawing library's path inside the page's files.
const GraphLibrary = "vendor/cytoscape.min.js"

// Prefix is where the page's files are served; / redirects to it.
const Prefix = "/ui/"

// static is the page's file tree, rooted at static/.
func static() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embed pattern names static: it is always there
	}
	return sub
}

// HasGraphLibrary reports whether the build embedded the drawing library.
func HasGraphLibrary() bool {
	st, err := fs.Stat(static(), GraphLibrary)
	return err == nil && st.Size() > 0
}

// IsPagePath reports whether a request path is one of the page's: they
// carry no data and answer without an API key (the page asks for one).
func IsPagePath(p string) bool { return p == "/" || strings.HasPrefix(p, Prefix) }

// Handler serves the page's files under Prefix and redirects / to it. The
// Content-Security-Policy keeps the page to its own origin: scripts,
// styles, images and API calls come from the server that served it, never
// from another host. Inline styles are allowed because cytoscape.js adds
// a small stylesheet to its container; inline scripts are not.
func Handler() http.Handler {
	files := http.StripPrefix(Prefix, http.FileServer(http.FS(static())))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			http.Redirect(w, r, Prefix, http.StatusFound)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		// The files change only with the binary; revalidate rather than cache.
		h.Set("Cache-Control", "no-cache")
		if path.Ext(r.URL.Path) == ".js" {
			h.Set("Content-Type", "text/javascript; charset=utf-8")
		}
		files.ServeHTTP(w, r)
	})
}
