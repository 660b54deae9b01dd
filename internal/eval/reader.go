package eval

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/chat"
)

// Reader answers a question from retrieved passages with an OpenAI-compatible
// chat-completions endpoint; it gives the end-to-end metrics (EM, F1, label
// accuracy). The prompts are ReaderSystemPrompt and ReaderPrompt.
type Reader struct {
	BaseURL string // e.g. http://127.0.0.1:11434/v1
	Model   string
	APIKey  string
	Timeout time.Duration
	Client  *http.Client
}

// ReaderSystemPrompt is the reader's instruction (documented in docs/eval.md).
const ReaderSystemPrompt = "You answer questions using only the given passages. Reply with the answer alone: " +
	"a short phrase (an entity, a date, a number, yes or no), with no explanation. If the passages do not " +
	"contain the answer, give your best short guess."

// LabelSystemPrompt is the instruction for FEVER-style claims.
const LabelSystemPrompt = "You verify claims using only the given passages. Reply with exactly one of: " +
	"SUPPORTS, REFUTES, NOT ENOUGH INFO."

// ReaderPrompt is the user message: numbered passages, then the question.
func ReaderPrompt(question string, passages []string, claim bool) string {
	var b strings.Builder
	b.WriteString("Passages:\n")
	for i, p := range passages {
		fmt.Fprintf(&b, "[%d] %s\n", i+1, strings.TrimSpace(p))
	}
	if claim {
		fmt.Fprintf(&b, "\nClaim: %s\nLabel:", question)
	} else {
		fmt.Fprintf(&b, "\nQuestion: %s\nAnswer:", question)
	}
	return b.String()
}

// Answer asks the endpoint once, at temperature 0, time-limited (60 s by
// default), and returns the first line of the reply.
func (r *Reader) Answer(ctx context.Context, question string, passages []string, claim bool) (string, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	sys := ReaderSystemPrompt
	if claim {
		sys = LabelSystemPrompt
	}
	cl := chat.Client{BaseURL: r.BaseURL, Model: r.Model, APIKey: r.APIKey, Timeout: timeout, HTTP: r.Client}
	out, err := cl.Complete(ctx, []chat.Message{{Role: "system", Content: sys}, {Role: "user", Content: ReaderPrompt(question, passages, claim)}})
	if errors.Is(err, chat.ErrUnexpectedResponse) {
		return "", fmt.Errorf("reader: %w", chat.ErrUnexpectedResponse)
	}
	if err != nil {
		return "", fmt.Errorf("reader: %w", err)
	}
	a, _, _ := strings.Cut(chat.StripThinking(out), "\n")
	return strings.TrimSpace(a), nil
}

// NormalizeLabel maps a reader's label reply onto FEVER's three labels.
func NormalizeLabel(s string) string {
	u := strings.ToUpper(s)
	switch {
	case strings.Contains(u, "NOT ENOUGH"):
		return "NOT ENOUGH INFO"
	case strings.Contains(u, "SUPPORT"):
		return "SUPPORTS"
	case strings.Contains(u, "REFUTE"):
		return "REFUTES"
	}
	return strings.TrimSpace(u)
}

// readerMetrics asks the reader about the top ReaderK documents. A reader
// error leaves the metrics absent for that question and is recorded.
func readerMetrics(ctx context.Context, cfg Config, q Question, texts []string, rec *Record) {
	if len(q.Answers) == 0 && q.Label == "" {
		return
	}
	passages := texts[:min(cfg.ReaderK, len(texts))]
	pred, err := cfg.Reader.Answer(ctx, q.Question, passages, q.Label != "")
	if err != nil {
		rec.Error = err.Error()
		return
	}
	rec.Prediction = pred
	if q.Label != "" {
		rec.Metrics["label_acc"] = map[bool]float64{true: 1, false: 0}[NormalizeLabel(pred) == NormalizeLabel(q.Label)]
		return
	}
	rec.Metrics["em"] = ExactMatch(pred, q.Answers)
	rec.Metrics["f1"] = F1(pred, q.Answers)
}
