package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/dmar-kg/dmar/internal/answer"
	"github.com/dmar-kg/dmar/internal/evidence"
	"github.com/dmar-kg/dmar/internal/scoring"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dmar-kg/dmar/internal/chat"
	"github.com/dmar-kg/dmar/internal/verify"
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
	// Replies, when set, is used instead of Cache: one file keyed by the
	// model file's sha256 and the request's (ReplyCache).
	Replies *ReplyCache

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
// With a schema the reply is constrained to it, and the schema is part of
// the cache key.
func (r *Reader) complete(ctx context.Context, cl chat.Client, msgs []chat.Message, schema *chat.Schema) (string, error) {
	if r.Replies != nil {
		key := RequestKey(msgs, schema, cl.MaxTokens)
		if reply, ok := r.Replies.Get(key); ok {
			r.hits.Add(1)
			return reply, nil
		}
		out, err := r.call(ctx, cl, msgs, schema)
		if err != nil {
			return out, err
		}
		return out, r.Replies.Put(key, out)
	}
	var path string
	if r.Cache != "" {
		key := msgs
		if schema != nil {
			key = append(slices.Clip(msgs), chat.Message{Role: "response_format", Content: schema.Name + "\x00" + string(schema.Schema)})
		}
		path = filepath.Join(r.Cache, CacheKey(r.Model, key)+".json")
		if raw, err := os.ReadFile(path); err == nil {
			var c cachedReply
			if json.Unmarshal(raw, &c) == nil && c.Model == r.Model {
				r.hits.Add(1)
				return c.Reply, nil
			}
		}
	}
	out, err := r.call(ctx, cl, msgs, schema)
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

// call asks the endpoint, counting the call and its time.
func (r *Reader) call(ctx context.Context, cl chat.Client, msgs []chat.Message, schema *chat.Schema) (string, error) {
	t := time.Now()
	var out string
	var err error
	if schema != nil {
		out, err = cl.CompleteSchema(ctx, msgs, *schema)
	} else {
		out, err = cl.Complete(ctx, msgs)
	}
	r.callNS.Add(int64(time.Since(t)))
	r.misses.Add(1)
	return out, err
}

func (r *Reader) client(maxTokens int) chat.Client {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	return chat.Client{BaseURL: r.BaseURL, Model: r.Model, APIKey: r.APIKey, Timeout: timeout, HTTP: r.Client, MaxTokens: maxTokens}
}

// Verify checks a claim as POST /v1/verify does (internal/verify: the same
// prompt, schema and rules), over the first k documents, each shown in at
// most chars characters of sentences (0: whole documents); replies are
// cached like Answer's.
func (r *Reader) Verify(ctx context.Context, claim string, docs []verify.Source, k, chars int) (verify.Result, error) {
	return r.VerifyWith(ctx, claim, docs, verify.Config{Sources: k, SourceChars: chars})
}

// VerifyWith is Verify with the verifier's configuration (its Generator is
// the reader's, behind the cache); SourceChars 0 shows whole documents.
func (r *Reader) VerifyWith(ctx context.Context, claim string, docs []verify.Source, cfg verify.Config) (verify.Result, error) {
	if cfg.SourceChars <= 0 {
		cfg.SourceChars = math.MaxInt32
	}
	cfg.Generator = cachedSchema{r, r.client(verify.DefaultMaxTokens)}
	v := verify.New(cfg)
	res, err := v.Verify(ctx, claim, docs)
	if err != nil {
		return res, fmt.Errorf("reader: %w", err)
	}
	return res, nil
}

// cachedSchema is the verifier's generator: the endpoint behind the
// reader's cache.
type cachedSchema struct {
	r  *Reader
	cl chat.Client
}

func (c cachedSchema) CompleteSchema(ctx context.Context, msgs []chat.Message, s chat.Schema) (string, error) {
	return c.r.complete(ctx, c.cl, msgs, &s)
}

// NormalizeLabel maps a reader's label reply onto FEVER's three labels
// (a verdict's NOT_ENOUGH_INFO is FEVER's NOT ENOUGH INFO).
func NormalizeLabel(s string) string {
	u := strings.ToUpper(strings.ReplaceAll(s, "_", " "))
	switch {
	case strings.Contains(u, "NOT ENOUGH"):
		return LabelNEI
	case strings.Contains(u, "SUPPORT"):
		return LabelSupports
	case strings.Contains(u, "REFUTE"):
		return LabelRefutes
	}
	return strings.TrimSpace(u)
}

// Answerer is the answer path of POST /v1/answer over the reader: the
// same evidence selection and prompt, the reader's replies cached.
func (r *Reader) Answerer(enc scoring.Encoder) *answer.Answerer {
	return answer.New(answer.Config{Generator: cachedGen{r, r.client(answer.DefaultMaxTokens)}, Encoder: enc, Evidence: evidence.Default})
}

// cachedGen is the answerer's generator: the endpoint behind the reader's
// cache. A stream is the whole reply in one piece.
type cachedGen struct {
	r  *Reader
	cl chat.Client
}

func (c cachedGen) Complete(ctx context.Context, msgs []chat.Message) (string, error) {
	return c.r.complete(ctx, c.cl, msgs, nil)
}

func (c cachedGen) Stream(ctx context.Context, msgs []chat.Message, onDelta func(string) error) (string, error) {
	out, err := c.Complete(ctx, msgs)
	if err == nil && onDelta != nil {
		err = onDelta(out)
	}
	return out, err
}

// readerMetrics asks the reader about the top documents as POST /v1/answer
// and POST /v1/verify do: a claim (a question with a label) through the
// verification path, a question for a short answer from the evidence
// (Config.EvidenceTokens; 0: the documents' heads). A reader error leaves
// the metrics absent for that question and is recorded.
func readerMetrics(ctx context.Context, cfg Config, q Question, docs []answer.Source, rec *Record) {
	if q.Label != "" {
		vs := make([]verify.Source, len(docs))
		for i, d := range docs {
			vs[i] = verify.Source{ID: d.ID, Title: d.Title, Text: d.Text}
		}
		claimMetrics(ctx, cfg, q, vs, rec)
		return
	}
	if len(q.Answers) == 0 {
		return
	}
	a := cfg.Reader.Answerer(cfg.Encoder)
	ans, err := a.Answer(ctx, q.Question, docs, answer.Options{EvidenceTokens: cfg.EvidenceTokens}, nil)
	if err != nil {
		rec.Error = "reader: " + err.Error()
		return
	}
	pred := ReplyAnswer(ans.Text)
	rec.Prediction = pred
	rec.Metrics["em"] = ExactMatch(pred, q.Answers)
	rec.Metrics["f1"] = F1(pred, q.Answers)
}

// ReplyAnswer is the answer in an answerer's reply: its first line, less
// its citations.
func ReplyAnswer(text string) string {
	a, _, _ := strings.Cut(text, "\n")
	a = citeRe.ReplaceAllString(a, "")
	return strings.TrimSpace(a)
}

var citeRe = regexp.MustCompile(`\s*\[[^\[\]]*\]`)

// graphMetrics scores the graph's answer, where there is one: graph_answered
// (trusted), and for a trusted one graph_em and graph_f1.
func graphMetrics(q Question, g *answer.GraphAnswer, rec *Record) {
	if g == nil || rec.Error != "" {
		return
	}
	rec.Graph = &GraphRecord{Label: g.Label, Doc: g.Doc, Path: g.Path, Relevance: g.Relevance, Confidence: g.Confidence, Agree: g.Agree, Trusted: g.Trusted}
	if len(q.Answers) == 0 || q.Label != "" {
		return
	}
	rec.Metrics["graph_answered"] = b2f(g.Trusted)
	if g.Trusted {
		rec.Metrics["graph_em"] = ExactMatch(g.Label, q.Answers)
		rec.Metrics["graph_f1"] = F1(g.Label, q.Answers)
	}
}

// addGraphAnswers adds em_graph and f1_graph: the trusted graph answer's metrics
// where there is one, the reader's elsewhere (DMAR with graph answers).
func addGraphAnswers(rec *Record) {
	em, ok := rec.Metrics["em"]
	if !ok {
		return
	}
	f1 := rec.Metrics["f1"]
	if rec.Metrics["graph_answered"] == 1 {
		em, f1 = rec.Metrics["graph_em"], rec.Metrics["graph_f1"]
	}
	rec.Metrics["em_graph"], rec.Metrics["f1_graph"] = em, f1
}

// claimMetrics verifies a claim from one call: the verdict gives the label
// accuracy, and with the sentences read and cited, FEVER's strict score:
// the label is right and, for a verifiable claim, a whole gold evidence set
// is among the sentences the generator read (fever_score) or among those its
// verdict cites (fever_score_cited, FEVER's own scorer with the cited
// sentences as the predicted evidence).
func claimMetrics(ctx context.Context, cfg Config, q Question, docs []verify.Source, rec *Record) {
	vc := verify.Config{Sources: cfg.ReaderK, SourceChars: cfg.ReaderChars}
	if cfg.EvidenceTokens > 0 {
		vc.Encoder, vc.EvidenceTokens = cfg.Encoder, cfg.EvidenceTokens
	}
	res, err := cfg.Reader.VerifyWith(ctx, q.Question, docs, vc)
	if err != nil {
		rec.Error = err.Error()
		return
	}
	rec.Prediction = string(res.Verdict)
	for _, e := range res.Evidence {
		rec.Evidence = append(rec.Evidence, fmt.Sprintf("%s:%d", e.Doc, e.Index))
	}
	right := NormalizeLabel(string(res.Verdict)) == NormalizeLabel(q.Label)
	rec.Metrics["label_acc"] = b2f(right)
	rec.Metrics["fever_score"] = b2f(right && (q.Label == LabelNEI || coversEvidenceSet(q.Evidence, res.Shown)))
	rec.Metrics["fever_score_cited"] = b2f(right && (q.Label == LabelNEI || coversEvidenceSet(q.Evidence, res.Evidence)))
}

// coversEvidenceSet reports whether the sentences hold every sentence of
// one of the gold evidence sets.
func coversEvidenceSet(gold [][]Evidence, sentences []verify.Sentence) bool {
	have := map[Evidence]bool{}
	for _, s := range sentences {
		have[Evidence{Doc: s.Doc, Sentence: s.Index}] = true
	}
	for _, set := range gold {
		if len(set) > 0 && !slices.ContainsFunc(set, func(e Evidence) bool { return !have[e] }) {
			return true
		}
	}
	return false
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
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
