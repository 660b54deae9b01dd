// Package chattest is a stand-in for an OpenAI-compatible chat endpoint,
// for the tests of what calls one (the chat client, the reformulator, the
// reader).
package chattest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Message is one message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is what the endpoint was asked.
type Request struct {
	Model         string    `json:"model"`
	Temperature   *float64  `json:"temperature"`
	Messages      []Message `json:"messages"`
	Authorization string    `json:"-"` // the header
	Body          string    `json:"-"` // as sent
}

// Server answers every POST to /v1/chat/completions with one completion
// whose content is its reply, and keeps the last request; any other request
// is a 404.
type Server struct {
	URL string // its base; the API is under URL + "/v1"

	mu   sync.Mutex
	last Request
}

// New starts a Server that replies reply; it stops when the test ends. A
// request body that is not JSON fails the test.
func New(tb testing.TB, reply string) *Server {
	answer, err := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"content": reply}}}})
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req Request
		if err := json.Unmarshal(body, &req); err != nil {
			tb.Errorf("chat request %q: %v", body, err)
		}
		req.Authorization, req.Body = r.Header.Get("Authorization"), string(body)
		s.mu.Lock()
		s.last = req
		s.mu.Unlock()
		_, _ = w.Write(answer)
	}))
	tb.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Last is the last request the server answered.
func (s *Server) Last() Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}
