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
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	body, err := json.Marshal(struct {
		Model       string    `json:"model"`
		Temperature float64   `json:"temperature"`
		Messages    []Message `json:"messages"`
	}{c.Model, 0, msgs})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return "", err
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
		return "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", &StatusError{StatusCode: resp.StatusCode, Status: resp.Status}
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", &responseError{msg: "decode response", err: err}
	}
	if len(out.Choices) == 0 {
		return "", &responseError{msg: "response has no choices"}
	}
	return out.Choices[0].Message.Content, nil
}

var thinkRe = regexp.MustCompile(`(?s)<think>.*?</think>`)

// StripThinking removes reasoning models' <think>...</think> blocks and
// surrounding space.
func StripThinking(s string) string {
	return strings.TrimSpace(thinkRe.ReplaceAllString(s, ""))
}
