package reformulate

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/chat"
)

// Chat reformulates with an OpenAI-compatible chat-completions endpoint
// (Ollama, vLLM, llama.cpp server). Errors are returned; the pipeline falls
// back to Builtin and says so.
type Chat struct {
	BaseURL string // e.g. http://127.0.0.1:11434/v1
	Model   string
	APIKey  string // optional; sent as a bearer token, never logged
	Timeout time.Duration
	Client  *http.Client
}

const systemPrompt = "You rewrite search queries for a retrieval system. Given an original query and evidence " +
	"snippets, write one search query that names the intermediate entities, relations and constraints the " +
	"evidence reveals, so that a search engine finds every document needed. Do not answer the question. " +
	"Output only the query, on one line."

// Reformulate calls the endpoint once, time-limited (10 s by default).
func (c Chat) Reformulate(ctx context.Context, in Input) (string, error) {
	if c.BaseURL == "" || c.Model == "" {
		return "", fmt.Errorf("chat reformulator: base_url and model must be configured")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	cl := chat.Client{BaseURL: c.BaseURL, Model: c.Model, APIKey: c.APIKey, Timeout: timeout, HTTP: c.Client}
	out, err := cl.Complete(ctx, []chat.Message{
		{Role: "system", Content: systemPrompt},
		{Role: "user", Content: Prompt(in)},
	})
	if err != nil {
		return "", fmt.Errorf("chat reformulator: %w", err)
	}
	q := strings.Join(strings.Fields(chat.StripThinking(out)), " ")
	if q == "" {
		return "", fmt.Errorf("chat reformulator: empty reformulation")
	}
	return q, nil
}
