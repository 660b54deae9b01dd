package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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
	// Cache, when set, is a folder of replies keyed by CacheKey (the model
	// and the prompt), so that a rerun asks the endpoint nothing.
	Cache string

	hits, misses atomic.Int64
	callNS       atomic.Int64 // time spent waiting for the endpoint
}

// ReaderStats says how a run used the reader: replies from the cache, calls
// to the endpoint and the seconds those calls took.
type ReaderStats struct {
	CacheHits int64   `json:"cache_hits"`
	Calls     int64   `json:"calls"`
	CallS     float64 `json:"call_s"`
}

// Stats returns the counts so far.
func (r *Reader) Stats() ReaderStats {
	return ReaderStats{CacheHits: r.hits.Load(), Calls: r.misses.Load(), CallS: time.Duration(r.callNS.Load()).Seconds()}
}

// CacheKey names a generation: the sha256 of the model name and the exact
// messages. The model name stands for the weights: serve changed weights
// under a new name (the local models are named with their quantisation,
// models/llm/MODELS), or clear the cache.
func CacheKey(model string, msgs []chat.Message) string {
	h := sha256.New()
	h.Write([]byte(model))
	for _, m := range msgs {
		fmt.Fprintf(h, "\x00%s\x00%s", m.Role, m.Content)
	}
	return hex.EncodeToString(h.Sum(nil))
}

type cachedReply struct {
	Model string `json:"model"`
	Reply string `json:"reply"`
}

// complete answers msgs from the cache, or asks the endpoint and stores the
// reply (a cache that cannot be written only costs the next run a call).
func (r *Reader) complete(ctx context.Context, cl chat.Client, msgs []chat.Message) (string, error) {
	var path string
	if r.Cache != "" {
		path = filepath.Join(r.Cache, CacheKey(r.Model, msgs)+".json")
		if raw, err := os.ReadFile(path); err == nil {
			var c cachedReply
			if json.Unmarshal(raw, &c) == nil && c.Model == r.Model {
				r.hits.Add(1)
				return c.Reply, nil
			}
		}
	}
	t := time.Now()
	out, err := cl.Complete(ctx, msgs)
	r.callNS.Add(int64(time.Since(t)))
	r.misses.Add(1)
	if err != nil || path == "" {
		return out, err
	}
	if raw, jerr := json.Marshal(cachedReply{Model: r.Model, Reply: out}); jerr == nil {
		if os.MkdirAll(r.Cache, 0o755) == nil {
			tmp := path + ".tmp"
			if os.WriteFile(tmp, raw, 0o644) == nil {
				_ = os.Rename(tmp, path)
			}
		}
	}
	return out, nil
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
	out, err := r.complete(ctx, cl, []chat.Message{{Role: "system", Content: sys}, {Role: "user", Content: ReaderPrompt(question, passages, claim)}})
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
	passages := make([]string, min(cfg.ReaderK, len(texts)))
	for i := range passages {
		passages[i] = clipPassage(texts[i], cfg.ReaderChars)
	}
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

// clipPassage keeps the first n characters of a passage (0: all), cut at a
// word boundary: on 2 CPU cores the prompt's length is most of a reader
// call's time.
func clipPassage(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if n <= 0 || len(r) <= n {
		return s
	}
	cut := string(r[:n])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return cut + " ..."
}
