package reformulate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
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

var thinkRe = regexp.MustCompile(`(?s)<think>.*?</think>`)

// Reformulate calls the endpoint once, time-limited.
func (c Chat) Reformulate(ctx context.Context, in Input) (string, error) {
	if c.BaseURL == "" || c.Model == "" {
		return "", fmt.Errorf("chat reformulator: base_url and model must be configured")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, _ := json.Marshal(map[string]any{
		"model":       c.Model,
		"temperature": 0,
		"messages": []map[string]string{
			{"role": "system", "content": systemPrompt},
			{"role": "user", "content": Prompt(in)},
		},
	})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.BaseURL, "/")+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return "", fmt.Errorf("chat reformulator: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	client := c.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("chat reformulator: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("chat reformulator: read response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("chat reformulator: endpoint answered %s", resp.Status)
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return "", fmt.Errorf("chat reformulator: decode response: %w", err)
	}
	if len(out.Choices) == 0 {
		return "", fmt.Errorf("chat reformulator: response has no choices")
	}
	q := strings.TrimSpace(thinkRe.ReplaceAllString(out.Choices[0].Message.Content, ""))
	q = strings.Join(strings.Fields(q), " ")
	if q == "" {
		return "", fmt.Errorf("chat reformulator: empty reformulation")
	}
	return q, nil
}
