// Package verify checks a claim against retrieved documents with a chat
// model whose reply is constrained to a JSON schema: a verdict (SUPPORTS,
// REFUTES or NOT_ENOUGH_INFO) and the numbers of the sentences it rests on.
// The model is shown the documents' sentences, numbered; the verifier quotes
// the sentences it cites from the documents themselves, so that a quote can
// never be invented, and a SUPPORTS or REFUTES that cites no sentence the
// model was shown becomes NOT_ENOUGH_INFO: no evidence, no verdict.
package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dmar-kg/dmar/internal/chat"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/evidence"
)

// Generator is the chat model, asked for a reply that follows a JSON
// schema: chat.Client implements it.
type Generator interface {
	CompleteSchema(ctx context.Context, msgs []chat.Message, s chat.Schema) (string, error)
}

var _ Generator = chat.Client{}

// Verdict is what the evidence says of a claim.
type Verdict string

// The three verdicts (FEVER's labels, NOT ENOUGH INFO spelled as one token).
const (
	Supports      Verdict = "SUPPORTS"
	Refutes       Verdict = "REFUTES"
	NotEnoughInfo Verdict = "NOT_ENOUGH_INFO"
)

// Verdicts are the verdicts a verification can return.
var Verdicts = []Verdict{Supports, Refutes, NotEnoughInfo}

// Source is one retrieved document.
type Source struct {
	ID, Title, Text string
}

// Sentence is one sentence of a retrieved document as the model was shown
// it: Number is its number in the prompt (from 1), Index its place among
// the document's Sentences (from 0), Text the sentence as the document has it.
type Sentence struct {
	Number int
	Doc    string
	Title  string
	Index  int
	Text   string
}

// Config sets the verifier's bounds; zero fields take the defaults.
type Config struct {
	Generator Generator // nil: every call fails with errs.Unavailable
	// Sources are the documents whose sentences are shown, best first
	// (default 3).
	Sources int
	// SourceChars bounds the characters of each document's sentences shown
	// (default 600): its first sentence, then those that share the most
	// words with the claim (Select).
	SourceChars int
	// MaxEvidence bounds the sentences a verdict may cite (default 5, as
	// FEVER scores).
	MaxEvidence int
	// Encoder and EvidenceTokens > 0 select the sentences shown as POST
	// /v1/answer's evidence_tokens does (internal/evidence): the claim's
	// best sentences of the first Sources documents within EvidenceTokens
	// reader tokens; SourceChars is then unused. Otherwise Select picks them.
	Encoder        evidence.Encoder
	EvidenceTokens int
}

// DefaultMaxTokens is the length bound (chat.Client.MaxTokens) to give the
// Generator: the reply is a short JSON object.
const DefaultMaxTokens = 96

// Verifier checks claims.
type Verifier struct{ cfg Config }

// New returns a Verifier with cfg's defaults filled in.
func New(cfg Config) *Verifier {
	if cfg.Sources <= 0 {
		cfg.Sources = 3
	}
	if cfg.SourceChars <= 0 {
		cfg.SourceChars = 600
	}
	if cfg.MaxEvidence <= 0 {
		cfg.MaxEvidence = 5
	}
	return &Verifier{cfg: cfg}
}

// ErrNoGenerator is the cause of the error Verify returns when no generator
// is configured.
var ErrNoGenerator = errors.New("no generator is configured")

// Check returns the error every Verify call returns when no generator is
// configured (a nil Verifier included): errs.Unavailable, wrapping
// ErrNoGenerator. Nil when one is.
func (v *Verifier) Check() error {
	if v != nil && v.cfg.Generator != nil {
		return nil
	}
	return &errs.Error{Code: errs.Unavailable, Err: ErrNoGenerator,
		Message: "no generator is configured: start one (scripts/services.sh start llm) and pass --chat-url URL --chat-model NAME to dmar serve or dmar verify"}
}

// Result is a checked verdict.
type Result struct {
	Verdict Verdict
	// ModelVerdict is the generator's own verdict; "" when its reply was
	// not the JSON asked for.
	ModelVerdict Verdict
	// Evidence are the sentences the verdict rests on, quoted from the
	// documents; empty for NOT_ENOUGH_INFO.
	Evidence []Sentence
	// Dropped are sentence numbers the generator cited that it was not shown.
	Dropped []int
	// Note says why Verdict is not ModelVerdict, or why the evidence was
	// set aside; "" when the generator's reply stands as it was.
	Note string
	// Shown are the sentences the generator read, Sources their documents' ids.
	Shown   []Sentence
	Sources []string
	// Reply is the generator's reply as it wrote it.
	Reply string
}

// Verify asks the generator about claim over the first Config.Sources
// documents of docs. A generator that is missing, unreachable or failing is
// an errs.Unavailable error; the context's own deadline or cancellation
// comes back as it is. Without documents, or without a sentence to show,
// the verdict is NOT_ENOUGH_INFO and no generator is asked.
func (v *Verifier) Verify(ctx context.Context, claim string, docs []Source) (Result, error) {
	if err := v.Check(); err != nil {
		return Result{}, err
	}
	docs = docs[:min(len(docs), v.cfg.Sources)]
	shown, err := v.selectShown(ctx, claim, docs)
	if err != nil {
		return Result{}, err
	}
	res := Result{Shown: shown, Sources: make([]string, len(docs))}
	for i, d := range docs {
		res.Sources[i] = d.ID
	}
	if len(shown) == 0 {
		res.Verdict, res.Note = NotEnoughInfo, "the retrieval found no sentences to verify the claim against"
		return res, nil
	}
	reply, err := v.cfg.Generator.CompleteSchema(ctx, Messages(claim, shown), chat.Schema{Name: "verdict", Schema: ReplySchema(len(shown), v.cfg.MaxEvidence)})
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Result{}, &errs.Error{Code: errs.Unavailable, Err: fmt.Errorf("generator: %w", err),
			Message: "the generator is unavailable or failed; POST /v1/retrieve still works", RetryAfter: 5e9}
	}
	res.Reply = reply
	ReadReply(&res, reply, v.cfg.MaxEvidence)
	return res, nil
}

// selectShown picks the sentences shown: by the encoder within the token
// budget when one is configured, else by Select's word overlap.
func (v *Verifier) selectShown(ctx context.Context, claim string, docs []Source) ([]Sentence, error) {
	if v.cfg.Encoder == nil || v.cfg.EvidenceTokens <= 0 {
		return Select(claim, docs, v.cfg.SourceChars), nil
	}
	in := make([]evidence.Doc, len(docs))
	for i, d := range docs {
		in[i] = evidence.Doc{ID: d.ID, Title: d.Title, Text: d.Text}
	}
	ev, err := evidence.Select(ctx, v.cfg.Encoder, claim, in, evidence.Config{Docs: len(docs), Tokens: v.cfg.EvidenceTokens, Facts: -1, Lead: evidence.Default.Lead, RankDecay: evidence.Default.RankDecay})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("verify: %w", err)
	}
	out := make([]Sentence, len(ev))
	for i, e := range ev {
		out[i] = Sentence{Number: i + 1, Doc: e.Doc, Title: e.Title, Index: e.Index, Text: e.Text}
	}
	return out, nil
}

// ReadReply reads reply (the generator's JSON) into res against res.Shown:
// cited numbers that were not shown are dropped, repeats and those past
// maxEvidence ignored, and the rule applied: SUPPORTS or REFUTES with no
// sentence left is NOT_ENOUGH_INFO, and NOT_ENOUGH_INFO rests on no
// evidence. A reply that is not the JSON asked for is NOT_ENOUGH_INFO too.
func ReadReply(res *Result, reply string, maxEvidence int) {
	var out struct {
		Evidence []int  `json:"evidence"`
		Verdict  string `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(chat.StripThinking(reply))), &out); err != nil || !known(Verdict(out.Verdict)) {
		res.Verdict, res.Evidence = NotEnoughInfo, nil
		res.Note = "the generator's reply was not a verdict in the JSON asked for; no verdict without evidence"
		return
	}
	res.ModelVerdict = Verdict(out.Verdict)
	seen := map[int]bool{}
	res.Evidence = nil
	for _, n := range out.Evidence {
		if n < 1 || n > len(res.Shown) {
			res.Dropped = append(res.Dropped, n)
			continue
		}
		if seen[n] || len(res.Evidence) >= maxEvidence {
			continue
		}
		seen[n] = true
		res.Evidence = append(res.Evidence, res.Shown[n-1])
	}
	res.Verdict = res.ModelVerdict
	switch {
	case res.Verdict != NotEnoughInfo && len(res.Evidence) == 0:
		res.Verdict = NotEnoughInfo
		res.Note = fmt.Sprintf("the generator answered %s but cited no sentence it was shown: NOT_ENOUGH_INFO", res.ModelVerdict)
	case res.Verdict == NotEnoughInfo && len(res.Evidence) > 0:
		res.Evidence = nil
		res.Note = "the generator answered NOT_ENOUGH_INFO: the sentences it cited are not evidence for a verdict"
	}
}

func known(v Verdict) bool {
	for _, k := range Verdicts {
		if v == k {
			return true
		}
	}
	return false
}

// SystemPrompt is the verifier's instruction.
const SystemPrompt = "You check a claim against numbered sentences from retrieved documents, using only those sentences. " +
	"Reply with JSON: \"evidence\", the numbers of the sentences that show the claim true or false (at most 5), and " +
	"\"verdict\": SUPPORTS if they show the claim is true, REFUTES if they show it is false, NOT_ENOUGH_INFO if no " +
	"sentence decides it (then evidence is empty)."

// The worked examples before the claim: one of each verdict, so that a
// small model sees REFUTES and NOT_ENOUGH_INFO used as well as SUPPORTS.
var examples = []struct{ claim, text, reply string }{
	{"Paris is the capital of Germany.", "Paris is the capital and most populous city of France.",
		`{"evidence": [1], "verdict": "REFUTES"}`},
	{"Paris lies on a river.", "Paris is the capital and most populous city of France. The city is a major railway hub. It lies on the Seine.",
		`{"evidence": [3], "verdict": "SUPPORTS"}`},
	{"Paris was founded by the Romans.", "Paris is the capital and most populous city of France. The city is a major railway hub.",
		`{"evidence": [], "verdict": "NOT_ENOUGH_INFO"}`},
}

// Messages are the chat messages sent for claim and the sentences shown.
func Messages(claim string, shown []Sentence) []chat.Message {
	msgs := []chat.Message{{Role: "system", Content: SystemPrompt}}
	for _, e := range examples {
		ss := Select(e.claim, []Source{{ID: "Q90", Title: "Paris", Text: e.text}}, len(e.text))
		msgs = append(msgs, chat.Message{Role: "user", Content: Prompt(e.claim, ss)}, chat.Message{Role: "assistant", Content: e.reply})
	}
	return append(msgs, chat.Message{Role: "user", Content: Prompt(claim, shown)})
}

// MaxSentenceChars clips a long sentence in the prompt (its quote, in the
// evidence, is whole).
const MaxSentenceChars = 400

// Prompt is the user message: each document's id and title, its sentences
// numbered, then the claim.
func Prompt(claim string, shown []Sentence) string {
	var b strings.Builder
	for i, s := range shown {
		if i == 0 || s.Doc != shown[i-1].Doc {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "Document %s (%s):\n", s.Doc, s.Title)
		}
		fmt.Fprintf(&b, "[%d] %s\n", s.Number, evidence.Clip(strings.Join(strings.Fields(s.Text), " "), MaxSentenceChars))
	}
	fmt.Fprintf(&b, "\nClaim: %s", strings.TrimSpace(claim))
	return b.String()
}

// ReplySchema is the JSON schema of the reply for n sentences shown:
// evidence first (the numbers, 1 to n, at most maxEvidence of them), then
// the verdict, so that a model constrained to it cites before it decides.
func ReplySchema(n, maxEvidence int) json.RawMessage {
	s := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"evidence": map[string]any{"type": "array", "maxItems": maxEvidence,
				"items": map[string]any{"type": "integer", "minimum": 1, "maximum": n}},
			"verdict": map[string]any{"type": "string", "enum": Verdicts},
		},
		"required":             []string{"evidence", "verdict"},
		"additionalProperties": false,
	}
	b, _ := json.Marshal(s)
	// encoding/json writes map keys sorted: evidence before verdict.
	return b
}
