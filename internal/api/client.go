package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls a running dmar server. Its methods are safe for concurrent
// use. A server's error answer comes back as an *Error.
type Client struct {
	base   *url.URL
	http   *http.Client
	apiKey string
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sends key as "Authorization: Bearer KEY" on every request.
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// DefaultURL is where a dmar server listens by default.
const DefaultURL = "http://127.0.0.1:8080"

// NewClient returns a client of the server at base ("http://host:port", or
// "host:port" for plain HTTP). httpClient nil: http.DefaultClient.
func NewClient(base string, httpClient *http.Client, opts ...Option) (*Client, error) {
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u, err := url.Parse(strings.TrimRight(base, "/"))
	if err != nil {
		return nil, fmt.Errorf("dmar client: base URL %q: %w", base, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("dmar client: base URL %q: want http://HOST:PORT or https://HOST:PORT", base)
	}
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	c := &Client{base: u, http: httpClient}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// Dial is NewClient with key as the API key (none when empty) and timeout
// as the limit of each request (0: none).
func Dial(base, key string, timeout time.Duration) (*Client, error) {
	var opts []Option
	if key != "" {
		opts = append(opts, WithAPIKey(key))
	}
	var hc *http.Client
	if timeout > 0 {
		hc = &http.Client{Timeout: timeout}
	}
	return NewClient(base, hc, opts...)
}

// Base is the server's base URL.
func (c *Client) Base() string { return c.base.String() }

// Error is a server's error answer: the HTTP status and the body's code,
// message and field.
type Error struct {
	StatusCode int
	Code       string // one of the Code constants
	Message    string
	Field      string        // the request field that was wrong, if any
	RetryAfter time.Duration // from Retry-After, on 429 and 503
	RequestID  string        // X-Request-ID of the answer
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.StatusCode)
	}
	return fmt.Sprintf("dmar server: %d %s: %s", e.StatusCode, e.Code, msg)
}

// Retrieve runs one retrieval (POST /v1/retrieve).
func (c *Client) Retrieve(ctx context.Context, req *RetrieveRequest) (*RetrieveResponse, error) {
	var out RetrieveResponse
	if err := c.Do(ctx, http.MethodPost, "/v1/retrieve", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Link links the entities mentioned in a text (POST /v1/link).
func (c *Client) Link(ctx context.Context, req *LinkRequest) (*LinkResponse, error) {
	var out LinkResponse
	if err := c.Do(ctx, http.MethodPost, "/v1/link", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Subgraph fetches an entity's ego subgraph (GET /v1/entities/{qid}/subgraph);
// p nil or zero fields: the server's defaults.
func (c *Client) Subgraph(ctx context.Context, qid string, p *SubgraphParams) (*SubgraphResponse, error) {
	q := url.Values{}
	if p != nil {
		for name, v := range map[string]int{"hops": p.Hops, "limit": p.Limit, "hub_degree": p.HubDegree} {
			if v != 0 {
				q.Set(name, strconv.Itoa(v))
			}
		}
	}
	path := "/v1/entities/" + url.PathEscape(qid) + "/subgraph"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out SubgraphResponse
	if err := c.Do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Health asks whether the process is alive (GET /healthz).
func (c *Client) Health(ctx context.Context) (*Health, error) {
	var out Health
	if err := c.Do(ctx, http.MethodGet, "/healthz", nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Ready asks whether the server can serve (GET /readyz). When it cannot
// (503), the checks come back with an *Error naming the failed ones.
func (c *Client) Ready(ctx context.Context) (*Readiness, error) {
	resp, raw, err := c.send(ctx, http.MethodGet, "/readyz", nil)
	if err != nil {
		return nil, err
	}
	var out Readiness
	if jerr := json.Unmarshal(raw, &out); jerr != nil || out.Status == "" {
		if resp.StatusCode != http.StatusOK {
			return nil, responseError(resp, raw)
		}
		return nil, fmt.Errorf("dmar client: GET /readyz: decode the answer: %v", jerr)
	}
	if resp.StatusCode != http.StatusOK {
		var failed []string
		for name, v := range out.Checks {
			if v != "ok" {
				failed = append(failed, name+": "+v)
			}
		}
		e := responseError(resp, nil)
		e.Code, e.Message = CodeUnavailable, out.Status+" ("+strings.Join(failed, "; ")+")"
		return &out, e
	}
	return &out, nil
}

// Do sends in (nil: no body) as JSON to method path (relative to the base,
// query string included) and decodes a 200 answer into out (nil: the body is
// read and discarded). A non-200 answer is an *Error.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("dmar client: %s %s: encode the request: %w", method, path, err)
		}
	}
	resp, raw, err := c.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return responseError(resp, raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("dmar client: %s %s: decode the answer: %w", method, path, err)
	}
	return nil
}

// Post sends body, a request built elsewhere, unchanged to route, so that
// the server validates it as it would a local request, and decodes the
// answer into out.
func (c *Client) Post(ctx context.Context, route string, body []byte, out any) error {
	return c.Do(ctx, http.MethodPost, route, json.RawMessage(body), out)
}

// send makes one request and reads the whole answer.
func (c *Client) send(ctx context.Context, method, path string, body []byte) (*http.Response, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := c.newRequest(ctx, method, path, rd, body != nil, "application/json")
	if err != nil {
		return nil, nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("dmar client: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("dmar client: %s %s: read the answer: %w", method, path, err)
	}
	return resp, raw, nil
}

// newRequest builds a request to path with the client's key; hasBody sets
// the JSON content type.
func (c *Client) newRequest(ctx context.Context, method, path string, body io.Reader, hasBody bool, accept string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, body)
	if err != nil {
		return nil, fmt.Errorf("dmar client: %w", err)
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	return req, nil
}

// responseError decodes an error answer; a body that is not an ErrorBody
// (a proxy's page) still gives the status.
func responseError(resp *http.Response, raw []byte) *Error {
	e := &Error{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Request-ID")}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	var b ErrorBody
	if json.Unmarshal(raw, &b) == nil && b.Error.Code != "" {
		e.Code, e.Message, e.Field = b.Error.Code, b.Error.Message, b.Error.Field
		return e
	}
	e.Message = strings.TrimSpace(string(raw))
	if len(e.Message) > 200 {
		e.Message = e.Message[:200] + "…"
	}
	return e
}
