package reformulate

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/dmar-kg/dmar/internal/chat"
)

// Chat reformulates with an OpenAI-compatible chat-completions endpoint
// (Ollama, vLLM, llama.cpp server): the paper's prompt (Prompt), one worked
// example before it, and the reply cleaned by Clean. Errors are returned; the
// pipeline falls back to Builtin and says why.
type Chat struct {
	BaseURL string // e.g. http://127.0.0.1:11434/v1
	Model   string
	APIKey  string // optional; sent as a bearer token, never logged
	Timeout time.Duration
	Client  *http.Client
}

// SystemPrompt is the reformulator's instruction. Small models (the 0.5B
// and 1.5B ones of models/llm) given only this and the paper's prompt echoed
// the prompt or copied an evidence snippet; the worked example (exampleUser,
// exampleReply) made them write queries (captured in testdata/replies.json).
const SystemPrompt = "You rewrite a search query for a search engine. You get the original query and evidence snippets from " +
	"documents retrieved for it. Write ONE new search query: the original question's words plus the names of the " +
	"people, places, works and relations in the evidence that lead to the answer. Never answer the question, never " +
	"copy the evidence, no explanation. Reply with the query only, at most 30 words."

const (
	exampleUser = "[Original Query: Where was the author of Dune born?]\n" +
		"[Evidence 1: Dune is a 1965 science fiction novel by American author Frank Herbert.]\n" +
		"[Evidence 2: Frank Herbert was an American science fiction author best known for Dune.]\n" +
		"Reformulate:"
	exampleReply = "Where was Frank Herbert, author of the novel Dune, born? Frank Herbert place of birth"
)

// maxReplyTokens bounds the reply: a query is well under 64 tokens, and the
// bound keeps a model that starts copying evidence from running to the limit.
const maxReplyTokens = 64

// Messages are the chat messages sent for in.
func Messages(in Input) []chat.Message {
	return []chat.Message{
		{Role: "system", Content: SystemPrompt},
		{Role: "user", Content: exampleUser},
		{Role: "assistant", Content: exampleReply},
		{Role: "user", Content: Prompt(in)},
	}
}

// Reformulate calls the endpoint once, time-limited (10 s by default), and
// cleans the reply.
func (c Chat) Reformulate(ctx context.Context, in Input) (string, error) {
	if c.BaseURL == "" || c.Model == "" {
		return "", fmt.Errorf("chat reformulator: base_url and model must be configured")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	cl := chat.Client{BaseURL: c.BaseURL, Model: c.Model, APIKey: c.APIKey, Timeout: timeout, HTTP: c.Client, MaxTokens: maxReplyTokens}
	out, err := cl.Complete(ctx, Messages(in))
	if err != nil {
		return "", fmt.Errorf("chat reformulator: %w", err)
	}
	q, err := Clean(out, in)
	if err != nil {
		return "", fmt.Errorf("chat reformulator: %w", err)
	}
	return q, nil
}
