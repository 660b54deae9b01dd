// Package chat is dmar's one client for OpenAI-compatible chat-completions
// endpoints (Ollama, vLLM, llama.cpp server, OpenAI). The query reformulator
// and the evaluation's reader both use it.
package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// Client calls one model at one endpoint.
type Client struct {
	BaseURL string // e.g. http://127.0.0.1:11434/v1; /chat/completions is appended
	Model   string
	APIKey  string        // optional; sent as a bearer token, never logged
	Timeout time.Duration // per call; 0: no limit beyond ctx
	HTTP    *http.Client  // nil: http.DefaultClient
	// MaxTokens bounds the reply's length (and so its time); 0: the
	// endpoint's default.
	MaxTokens int
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // system | user | assistant
	Content string `json:"content"`
}

// ErrUnexpectedResponse marks a response that is not a chat completion: a
// body that does not decode, or one without choices.
var ErrUnexpectedResponse = errors.New("unexpected response from the endpoint")

// StatusError is a non-200 answer from the endpoint.
type StatusError struct {
	StatusCode int
	Status     string // e.g. "500 Internal Server Error"
}

func (e *StatusError) Error() string { return "endpoint answered " + e.Status }

// responseError says what was wrong with a response; errors.Is matches
// ErrUnexpectedResponse.
type responseError struct {
	msg string
	err error
}

func (e *responseError) Error() string {
	if e.err != nil {
		return e.msg + ": " + e.err.Error()
	}
	return e.msg
}
func (e *responseError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrUnexpectedResponse}
	}
	return []error{ErrUnexpectedResponse, e.err}
}

// Complete sends the messages once at temperature 0 and returns the first
// choice's content as the model wrote it. Errors say which step failed;
// callers prefix their own name.
func (c Client) Complete(ctx context.Context, msgs []Message) (string, error) {
	out, _, err := c.complete(ctx, msgs, nil)
	return out, err
}

// Usage is what one call cost, as the endpoint reports it: tokens (OpenAI's
// usage) and, from llama.cpp's server, the prompt tokens it evaluated
// (those not restored from its cache) and the milliseconds spent reading
// the prompt and writing the reply. Fields an endpoint does not report are 0.
type Usage struct {
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	PromptEvaluated  int     `json:"prompt_evaluated"`
	PromptMS         float64 `json:"prompt_ms"`
	PredictedMS      float64 `json:"predicted_ms"`
}

// CompleteUsage is Complete that also returns the call's Usage.
func (c Client) CompleteUsage(ctx context.Context, msgs []Message) (string, Usage, error) {
	return c.complete(ctx, msgs, nil)
}

// Schema is a JSON schema the reply must follow: sent as OpenAI's
// response_format {"type": "json_schema"}, which llama.cpp's server turns
// into a grammar, so that a constrained model can only write a matching
// document. Endpoints that ignore it return free text: callers still
// validate the reply.
type Schema struct {
	Name   string          // a short name, [a-zA-Z0-9_-]
	Schema json.RawMessage // the JSON schema
}

// CompleteSchema is Complete with the reply constrained to s.
func (c Client) CompleteSchema(ctx context.Context, msgs []Message, s Schema) (string, error) {
	out, _, err := c.complete(ctx, msgs, &s)
	return out, err
}

func (c Client) complete(ctx context.Context, msgs []Message, format *Schema) (string, Usage, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	resp, err := c.post(ctx, msgs, false, format)
	if err != nil {
		return "", Usage{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", Usage{}, fmt.Errorf("read response: %w", err)
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
		Timings struct {
			PromptN     int     `json:"prompt_n"`
			PromptMS    float64 `json:"prompt_ms"`
			PredictedMS float64 `json:"predicted_ms"`
		} `json:"timings"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", Usage{}, &responseError{msg: "decode response", err: err}
	}
	if len(out.Choices) == 0 {
		return "", Usage{}, &responseError{msg: "response has no choices"}
	}
	u := Usage{PromptTokens: out.Usage.PromptTokens, CompletionTokens: out.Usage.CompletionTokens,
		PromptEvaluated: out.Timings.PromptN, PromptMS: out.Timings.PromptMS, PredictedMS: out.Timings.PredictedMS}
	return out.Choices[0].Message.Content, u, nil
}

func (c Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.Timeout > 0 {
		return context.WithTimeout(ctx, c.Timeout)
	}
	return context.WithCancel(ctx)
}

// post sends one chat-completions request and returns a 200 response, whose
// body the caller closes.
func (c Client) post(ctx context.Context, msgs []Message, stream bool, format *Schema) (*http.Response, error) {
	type jsonSchema struct {
		Name   string          `json:"name"`
		Strict bool            `json:"strict"`
		Schema json.RawMessage `json:"schema"`
	}
	type responseFormat struct {
		Type       string     `json:"type"`
		JSONSchema jsonSchema `json:"json_schema"`
	}
	var rf *responseFormat
	if format != nil {
		rf = &responseFormat{Type: "json_schema", JSONSchema: jsonSchema{Name: format.Name, Strict: true, Schema: format.Schema}}
	}
	body, err := json.Marshal(struct {
		Model          string          `json:"model"`
		Temperature    float64         `json:"temperature"`
		MaxTokens      int             `json:"max_tokens,omitempty"`
		Stream         bool            `json:"stream,omitempty"`
		Messages       []Message       `json:"messages"`
		ResponseFormat *responseFormat `json:"response_format,omitempty"`
	}{c.Model, 0, c.MaxTokens, stream, msgs, rf})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return nil, &StatusError{StatusCode: resp.StatusCode, Status: resp.Status}
	}
	return resp, nil
}

var thinkRe = regexp.MustCompile(`(?s)<think>.*?</think>`)

// StripThinking removes reasoning models' <think>...</think> blocks and
// surrounding space.
func StripThinking(s string) string {
	return strings.TrimSpace(thinkRe.ReplaceAllString(s, ""))
}
