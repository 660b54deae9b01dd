package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dmcp "github.com/dmar-kg/dmar/internal/mcp"
	"github.com/dmar-kg/dmar/internal/server"
)

// rpc is one JSON-RPC answer as a client reads it.
type rpc struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// postMCP sends body to POST /mcp as an MCP client of the 2025-03-26
// protocol does (no version header: the one version that allows batches).
func postMCP(ctx context.Context, t *testing.T, url, key, body string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// batch is a JSON-RPC batch of n copies of the call method(params), with
// ids 1..n.
func batch(n int, method, params string) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, i+1, method, params)
	}
	b.WriteString("]")
	return b.String()
}

func errorBody(t *testing.T, b []byte) (code, message, field string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Message, Field string }
	}
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("not dmar's error body: %s", b)
	}
	return e.Error.Code, e.Error.Message, e.Error.Field
}

// A batch over the server's limit is refused before any of it runs, naming
// the limit; one at the limit is answered in full.
func TestMCPBatchBounded(t *testing.T) {
	srv := httptest.NewServer(newAPIWith(t, setup{server: func(c *server.Config) { c.MCPMaxBatch = 8 }}))
	defer srv.Close()
	ctx := context.Background()
	resp, b, err := postMCP(ctx, t, srv.URL, readKey, batch(2000, "tools/list", "{}"))
	if err != nil {
		t.Fatal(err)
	}
	if code, msg, field := errorBody(t, b); resp.StatusCode != http.StatusRequestEntityTooLarge || code != "payload_too_large" ||
		field != "batch" || !strings.Contains(msg, "2000 messages") || !strings.Contains(msg, "limit of 8 (server.mcp_max_batch)") {
		t.Errorf("a batch of 2000: %d %s", resp.StatusCode, b)
	}
	resp, b, err = postMCP(ctx, t, srv.URL, readKey, batch(8, "tools/list", "{}"))
	if err != nil {
		t.Fatal(err)
	}
	var out []rpc
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != http.StatusOK || len(out) != 8 || out[7].Result == nil {
		t.Errorf("a batch of 8: %d, %d answers (%v) %.300s", resp.StatusCode, len(out), err, b)
	}
}

// A body over the server's MCP limit is refused with 413 naming the limit
// and the setting.
func TestMCPBodyBounded(t *testing.T) {
	srv := httptest.NewServer(newAPIWith(t, setup{server: func(c *server.Config) { c.MCPMaxBodyBytes = 64 << 10 }}))
	defer srv.Close()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"link","arguments":{"text":%q}}}`, strings.Repeat("Inception ", 7000))
	resp, b, err := postMCP(context.Background(), t, srv.URL, readKey, body)
	if err != nil {
		t.Fatal(err)
	}
	if code, msg, _ := errorBody(t, b); resp.StatusCode != http.StatusRequestEntityTooLarge || code != "payload_too_large" ||
		!strings.Contains(msg, "65536 bytes (server.mcp_max_body_bytes)") {
		t.Errorf("a 70 kB body: %d %s", resp.StatusCode, b)
	}
}

// Every message is charged to the key's rate limit, a batch by its length,
// and a tool call is not charged again for the REST request it makes.
func TestMCPChargesEveryMessage(t *testing.T) {
	srv := httptest.NewServer(newAPIWith(t, setup{keys: []server.APIKey{{Name: "slow", SHA256: hash("slow-key"), Rate: 0.001, Burst: 3}}}))
	defer srv.Close()
	ctx := context.Background()
	// More than the burst at once can never pass: refused, naming it.
	resp, b, err := postMCP(ctx, t, srv.URL, "slow-key", batch(4, "tools/list", "{}"))
	if err != nil {
		t.Fatal(err)
	}
	if _, msg, _ := errorBody(t, b); resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(msg, "burst 3") {
		t.Errorf("a batch of 4 with a burst of 3: %d %s", resp.StatusCode, b)
	}
	// Three messages pass (the refused batch cost nothing); the tool call's
	// REST request does not take a fourth.
	for i, body := range []string{
		batch(2, "tools/list", "{}"),
		`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"link","arguments":{"text":"Inception"}}}`,
	} {
		resp, b, err := postMCP(ctx, t, srv.URL, "slow-key", body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || strings.Contains(string(b), "429") || strings.Contains(string(b), "rate") {
			t.Errorf("request %d within the burst: %d %.300s", i+1, resp.StatusCode, b)
		}
	}
	resp, b, err = postMCP(ctx, t, srv.URL, "slow-key", batch(1, "tools/list", "{}"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a fourth message: %d %s, want 429 with Retry-After", resp.StatusCode, b)
	}
}

// stall is a REST handler whose /v1/link waits for its request to end,
// reporting when it starts and when its context is done.
type stall struct {
	api               http.Handler
	started, canceled chan struct{}
}

func newStall(api http.Handler) *stall {
	return &stall{api: api, started: make(chan struct{}, 100), canceled: make(chan struct{}, 100)}
}

func (s *stall) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/link" {
		s.api.ServeHTTP(w, r)
		return
	}
	s.started <- struct{}{}
	<-r.Context().Done()
	s.canceled <- struct{}{}
	http.Error(w, `{"error":{"code":"unavailable","message":"the request timed out"}}`, http.StatusServiceUnavailable)
}

// A POST past the request timeout is answered with a JSON-RPC error for
// each of its calls, and the calls are stopped.
func TestMCPTimeoutAnswersEachCall(t *testing.T) {
	var st *stall
	h := newAPIWith(t, setup{
		server: func(c *server.Config) { c.RequestTimeout = 300 * time.Millisecond },
		mcp:    func(c *dmcp.Config) { c.Timeout = 300 * time.Millisecond },
		wrap:   func(api http.Handler) http.Handler { st = newStall(api); return st },
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	link := `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"link","arguments":{"text":"Inception"}}}`
	body := "[" + fmt.Sprintf(link, "1") + "," + fmt.Sprintf(link, `"two"`) + `,{"jsonrpc":"2.0","method":"notifications/initialized"}]`
	resp, b, err := postMCP(ctx, t, srv.URL, readKey, body)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	var out []rpc
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != http.StatusOK || len(out) != 2 {
		t.Fatalf("%d %s: want 200 and an answer per call", resp.StatusCode, b)
	}
	for i, id := range []string{"1", `"two"`} {
		if string(out[i].ID) != id || out[i].Error == nil || out[i].Error.Code != dmcp.CodeTimedOut || !strings.Contains(out[i].Error.Message, "server.request_timeout") {
			t.Errorf("answer %d: %s, want id %s with the timeout error", i, b, id)
		}
	}
	for range 2 {
		select {
		case <-st.canceled:
		case <-ctx.Done():
			t.Fatal("a call went on after its request's time was up")
		}
	}
	// A single call: one JSON-RPC error object.
	_, b, err = postMCP(ctx, t, srv.URL, readKey, fmt.Sprintf(link, "7"))
	var one rpc
	if err != nil || json.Unmarshal(b, &one) != nil || string(one.ID) != "7" || one.Error == nil || one.Error.Code != dmcp.CodeTimedOut {
		t.Errorf("a single call past the timeout: %v %s", err, b)
	}
}

// A tool call stops when its client goes, as a REST request does.
func TestMCPCallStopsWhenClientGoes(t *testing.T) {
	var st *stall
	srv := httptest.NewServer(newAPIWith(t, setup{wrap: func(api http.Handler) http.Handler { st = newStall(api); return st }}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := postMCP(ctx, t, srv.URL, readKey, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"link","arguments":{"text":"Inception"}}}`)
		done <- err
	}()
	wait := time.After(20 * time.Second)
	select {
	case <-st.started:
	case <-wait:
		t.Fatal("the call did not start")
	}
	cancel()
	select {
	case <-st.canceled:
	case <-wait:
		t.Fatal("the call went on after its client had gone")
	}
	if err := <-done; err != nil {
		t.Logf("the cancelled call: %v", err) // expected; what matters is that it stopped
	}
}

// The answers to one POST together are bounded as a REST answer is: past
// the limit each call gets a JSON-RPC error naming it, and nothing of the
// answers is sent.
func TestMCPReplyBounded(t *testing.T) {
	const limit = 64 << 10
	srv := httptest.NewServer(newAPIWith(t, setup{
		server: func(c *server.Config) { c.MaxResponseBytes = limit },
		mcp:    func(c *dmcp.Config) { c.MaxReplyBytes = limit },
	}))
	defer srv.Close()
	ctx := context.Background()
	one := `{"query":"Which films did Christopher Nolan direct?","k":3}`
	// One call's answer is under the limit...
	resp, b, err := postMCP(ctx, t, srv.URL, readKey, batch(1, "tools/call", `{"name":"retrieve","arguments":`+one+`}`))
	if err != nil || resp.StatusCode != http.StatusOK || len(b) > limit || !strings.Contains(string(b), "Q25191") {
		t.Fatalf("one retrieve: %v %d, %d bytes: %.300s", err, resp.StatusCode, len(b), b)
	}
	// ...sixteen together are not.
	resp, b, err = postMCP(ctx, t, srv.URL, readKey, batch(16, "tools/call", `{"name":"retrieve","arguments":`+one+`}`))
	if err != nil {
		t.Fatal(err)
	}
	var out []rpc
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != http.StatusOK || len(out) != 16 || len(b) > limit {
		t.Fatalf("16 retrieves: %d, %d bytes: %.300s", resp.StatusCode, len(b), b)
	}
	for _, o := range out {
		if o.Error == nil || o.Error.Code != dmcp.CodeReplyTooLarge || !strings.Contains(o.Error.Message, "65536 bytes") {
			t.Fatalf("16 retrieves: answer %s, want the reply limit's error", o.ID)
		}
	}
}

// dmar mcp answers a line that is not JSON with a parse error (-32700) and
// one that is not a JSON-RPC message with an invalid request (-32600), and
// the session goes on.
func TestStdioSurvivesMalformedLines(t *testing.T) {
	s, err := dmcp.New(dmcp.Config{API: api(t), Spec: server.OpenAPI(), Key: readKey})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.ServeIO(ctx, inR, outW) }()
	lines := bufio.NewScanner(outR)
	lines.Buffer(nil, 1<<20)
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatalf("write %q: %v (the session has ended)", line, err)
		}
	}
	read := func() rpc {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("no answer: %v", lines.Err())
		}
		var r rpc
		if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
			t.Fatalf("answer %q: %v", lines.Text(), err)
		}
		return r
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := read(); r.Result == nil {
		t.Fatalf("initialize: %+v", r)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, c := range []struct {
		line string
		code int
		id   string
	}{
		{"garbage", -32700, "null"},
		{`{"jsonrpc":"2.0","id":2,"method":`, -32700, "null"},
		{"{}", -32600, "null"},
		{`{"jsonrpc":"1.0","id":3,"method":"tools/list"}`, -32600, "3"},
	} {
		send(c.line)
		r := read()
		if r.Error == nil || r.Error.Code != c.code || string(r.ID) != c.id {
			t.Errorf("%q: %+v, want error %d with id %s", c.line, r, c.code, c.id)
		}
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	if r := read(); string(r.ID) != "4" || !strings.Contains(string(r.Result), `"retrieve"`) {
		t.Errorf("tools/list after the malformed lines: %+v", r)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("end of input: %v", err)
	}
}
