package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/dmar-kg/dmar/internal/api"
)

// call sends one request to the REST handler in process and decodes its
// JSON answer into out. A refusal is an *api.Error with the server's code,
// message and field.
func (s *Service) call(ctx context.Context, creds http.Header, method, path string, in, out any) error {
	var body io.Reader = http.NoBody
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode the request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://localhost"+path, body)
	if err != nil {
		return err
	}
	// A loopback Host: the outer request, if any, passed the Host check.
	req.Host = "localhost"
	req.RemoteAddr = "127.0.0.1:0"
	for k, v := range creds {
		req.Header[k] = v
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	w := &capture{header: http.Header{}, status: http.StatusOK} // no limit: the REST handler's response, whole
	s.cfg.API.ServeHTTP(w, req)
	if w.status/100 != 2 {
		e := &api.Error{StatusCode: w.status, RequestID: w.header.Get("X-Request-ID")}
		var b api.ErrorBody
		if json.Unmarshal(w.body.Bytes(), &b) == nil && b.Error.Message != "" {
			e.Code, e.Message, e.Field = b.Error.Code, b.Error.Message, b.Error.Field
		} else {
			e.Message = http.StatusText(w.status)
		}
		return e
	}
	if err := json.Unmarshal(w.body.Bytes(), out); err != nil {
		return fmt.Errorf("decode the answer of %s %s: %w", method, path, err)
	}
	return nil
}
