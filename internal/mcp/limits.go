package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC error codes of the server-error range (-32000 to -32099) that
// a POST /mcp answers a call with when it cannot answer it in bounds.
const (
	// CodeTimedOut: the POST ran past its time limit (request_timeout).
	CodeTimedOut = -32000
	// CodeReplyTooLarge: the POST's answers together are over the reply limit.
	CodeReplyTooLarge = -32001
)

// post is what the messages of one POST /mcp share: the context that ends
// when the POST's time is up or its client has gone. The tool handlers
// reach it through their context's values (the SDK derives a session's
// context from the request's, keeping values but not cancellation).
type post struct {
	ctx     context.Context
	timeout time.Duration
}

type postKey struct{}

// err is the JSON-RPC error of a call that the POST's end cut short.
func (p *post) err() *jsonrpc.Error {
	if errors.Is(p.ctx.Err(), context.DeadlineExceeded) {
		return timedOut(p.timeout)
	}
	return &jsonrpc.Error{Code: CodeTimedOut, Message: "the request was cancelled (the client went away)"}
}

func timedOut(d time.Duration) *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeTimedOut, Data: json.RawMessage(`{"retry_after_seconds":1}`),
		Message: fmt.Sprintf("the request took longer than the server's limit of %s (server.request_timeout) and was stopped; retry later, or send fewer calls per request", d)}
}

// bounded is the receiving middleware of POST /mcp: a message runs under
// its POST's context, so that a call stops when the POST's time is up or its
// client goes; one that the POST's end cut short, or that was still queued
// then, is answered with a JSON-RPC error. Over stdio there is no POST, and
// each tool call is bounded by the REST request it makes.
func bounded(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		p, ok := ctx.Value(postKey{}).(*post)
		if !ok {
			return next(ctx, method, req)
		}
		if p.ctx.Err() != nil {
			return nil, error(p.err())
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(p.ctx, cancel)()
		res, err := next(ctx, method, req)
		if p.ctx.Err() != nil {
			return nil, error(p.err())
		}
		return res, err
	}
}

// serveHTTP runs one POST through the SDK's handler within the POST's
// bounds: its time (Config.Timeout, and the request context's own
// deadline) and the size of its answer (Config.MaxReplyBytes). Past
// either, each call of the POST is answered with a JSON-RPC error.
func (s *Service) serveHTTP(w http.ResponseWriter, r *http.Request, sdk http.Handler) {
	if r.Method != http.MethodPost || r.Body == nil {
		sdk.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody()))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("the MCP request body is over the limit of %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "could not read the request body", http.StatusBadRequest)
		return
	}
	ctx, cancel := r.Context(), context.CancelFunc(func() {})
	if s.cfg.Timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, s.cfg.Timeout)
	}
	defer cancel()
	timeout := s.cfg.Timeout
	if d, ok := r.Context().Deadline(); ok && (timeout == 0 || time.Until(d) < timeout) {
		timeout = time.Until(d).Round(time.Millisecond)
	}
	p := &post{ctx: ctx, timeout: timeout}
	req := r.WithContext(context.WithValue(ctx, postKey{}, p))
	req.Body = io.NopCloser(bytes.NewReader(body))
	rec := &capture{header: http.Header{}, limit: s.cfg.MaxReplyBytes}
	sdk.ServeHTTP(rec, req)

	switch {
	case rec.wrote && !rec.over:
		for k, v := range rec.header {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.status)
		w.Write(rec.body.Bytes())
	case r.Context().Err() != nil && !errors.Is(r.Context().Err(), context.DeadlineExceeded):
		// The client has gone: there is no one to answer.
	case rec.over:
		answerEach(w, body, &jsonrpc.Error{Code: CodeReplyTooLarge,
			Message: fmt.Sprintf("the answers to this request are over the server's limit of %d bytes (server.max_response_bytes); send fewer calls per request, or ask for less (k, limit)", s.cfg.MaxReplyBytes)})
	default:
		w.Header().Set("Retry-After", "1")
		answerEach(w, body, p.err())
	}
}

func (s *Service) maxBody() int64 {
	if s.cfg.MaxBodyBytes > 0 {
		return s.cfg.MaxBodyBytes
	}
	return mcp.DefaultMaxRequestBodyBytes
}

// answerEach answers every call in body (a JSON-RPC message or batch) with
// jerr, as 200 with a JSON-RPC response (an array for a batch), so that an
// MCP client hands each caller its error.
func answerEach(w http.ResponseWriter, body []byte, jerr *jsonrpc.Error) {
	type response struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}
	var msgs []json.RawMessage
	batch := json.Unmarshal(body, &msgs) == nil
	if !batch {
		msgs = []json.RawMessage{body}
	}
	out := []response{}
	for _, m := range msgs {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(m, &req) == nil && req.Method != "" && len(req.ID) > 0 && string(req.ID) != "null" {
			out = append(out, response{JSONRPC: "2.0", ID: req.ID, Error: jerr})
		}
	}
	if len(out) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var b []byte
	if batch {
		b, _ = json.Marshal(out)
	} else {
		b, _ = json.Marshal(out[0])
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// capture is a response held in memory: the SDK's answer until it is
// complete, so that an answer over the limit is never sent and one that
// never came is answered with errors, and the in-process REST handler's
// response to a tool call. Past limit bytes it keeps nothing more.
type capture struct {
	header http.Header
	status int
	wrote  bool
	over   bool
	limit  int // 0: none
	body   bytes.Buffer
}

func (c *capture) Header() http.Header { return c.header }

func (c *capture) WriteHeader(status int) {
	if !c.wrote {
		c.status, c.wrote = status, true
	}
}

func (c *capture) Write(b []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	if c.over {
		return len(b), nil
	}
	if c.limit > 0 && c.body.Len()+len(b) > c.limit {
		c.over = true
		c.body = bytes.Buffer{}
		return len(b), nil
	}
	return c.body.Write(b)
}

// Flush is a no-op: the answer is read once complete.
func (c *capture) Flush() {}
