// Package answer writes a short answer to a question from retrieved
// documents, citing the documents it used by id ("[Q25188]"). Where the
// knowledge graph already holds the answer (the path that put the top
// document first ends at the entity asked for, and is trusted), the answer
// is that entity's label, at once, with no model call. Otherwise a chat
// model reads the evidence: the sentences of the top documents that answer
// the question within a token budget, and the graph's facts
// (internal/evidence). Citations are checked against the documents the
// model was shown: an id it invents is dropped from the citations and from
// the text.
package answer

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/chat"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/evidence"
)

// Generator is the chat model: chat.Client implements it.
type Generator interface {
	Complete(ctx context.Context, msgs []chat.Message) (string, error)
	Stream(ctx context.Context, msgs []chat.Message, onDelta func(string) error) (string, error)
}

var _ Generator = chat.Client{}

// Source is one retrieved document as the model sees it, with the graph's
// facts about it ("subject - relation - object", evidence.FactLines).
type Source struct {
	ID, Title, Text string
	Facts           []string
}

// Config sets the answerer's bounds; zero fields take the defaults.
type Config struct {
	Generator Generator // nil: every call fails with errs.Unavailable
	// Sources and SourceChars shape the documents' heads, the prompt of
	// Options.EvidenceTokens 0: the first Sources documents (default 3),
	// SourceChars characters each (default 500).
	Sources     int
	SourceChars int
	// Encoder scores the evidence's sentences against the question (the
	// retrieval's own encoder); nil: every answer reads the documents' heads.
	Encoder evidence.Encoder
	// Evidence bounds the selection; its Tokens is replaced by each
	// request's Options.EvidenceTokens.
	Evidence evidence.Config
}

// Options are one answer's choices.
type Options struct {
	// EvidenceTokens is the budget of reader tokens for the evidence
	// (DefaultEvidenceTokens); 0 shows the documents' heads instead.
	EvidenceTokens int
	// Graph, when set and trusted, is the answer: no model is asked.
	Graph *GraphAnswer
}

// DefaultEvidenceTokens is the evidence budget a request gets by default:
// 0, the documents' heads. Selected evidence (evidence_tokens 160) makes
// the reader's answers about 1.6-1.8 times faster, at the same F1 on kgqa
// but 0.2 lower on HotpotQA's short multi-hop paragraphs, whose heads are
// already whole paragraphs (docs/eval/end-to-end.md); a trusted graph
// answer needs no reader at all.
const DefaultEvidenceTokens = 0

// MaxEvidenceTokens bounds a request's evidence budget (the reader's
// context is 4,096 tokens, shared with the instruction and the reply).
const MaxEvidenceTokens = 2000

// DefaultMaxTokens is the length bound (chat.Client.MaxTokens) to give the
// Generator: it bounds an answer's time, and on the 2-core machine the 1.5B
// model writes about 10 tokens a second.
const DefaultMaxTokens = 48

// Answerer writes answers.
type Answerer struct{ cfg Config }

// New returns an Answerer with cfg's defaults filled in.
func New(cfg Config) *Answerer {
	if cfg.Sources <= 0 {
		cfg.Sources = 3
	}
	if cfg.SourceChars <= 0 {
		cfg.SourceChars = 500
	}
	return &Answerer{cfg: cfg}
}

// Check returns the error every Answer call returns when no generator is
// configured (a nil Answerer included): errs.Unavailable, wrapping
// ErrNoGenerator, with the message a client sees. Nil when one is.
func (a *Answerer) Check() error {
	if a != nil && a.cfg.Generator != nil {
		return nil
	}
	return &errs.Error{Code: errs.Unavailable, Err: ErrNoGenerator,
		Message: "no generator is configured: start one (scripts/services.sh start llm) and pass --chat-url URL --chat-model NAME to dmar serve or dmar ask"}
}

// Answer is a generated answer and its checked citations.
type Answer struct {
	Text      string   // the answer, invented citations removed
	Citations []string // ids of shown documents the answer cites, in order of first citation
	Dropped   []string // cited ids that were not among the shown documents
	Shown     []string // ids of the documents the model was shown
	// Source says who answered: SourceGraph or SourceReader.
	Source string
	// Evidence is what the reader was shown when it read selected
	// evidence (nil for the documents' heads and for graph answers).
	Evidence []evidence.Sentence
	// Path is the graph path a graph answer follows.
	Path string
}

// Who answered.
const (
	SourceGraph  = "graph"
	SourceReader = "reader"
)

// ErrNoGenerator is the cause of the error Answer returns when no generator
// is configured.
var ErrNoGenerator = errors.New("no generator is configured")

// SystemPrompt is the answerer's instruction.
const SystemPrompt = "You answer a question using only the sources given. Each source starts with its id in square " +
	"brackets. Reply with a short answer, one sentence at most, and cite the ids of the sources you used in square " +
	"brackets after it, as they appear before the sources. If the sources do not answer the question, say that " +
	"they do not."

// The worked example before the question: without one the 0.5B model
// rarely cited, and with the example inside SystemPrompt it copied the
// example's sentence and id (testdata/replies.json holds both).
const (
	exampleUser  = "Sources:\n[Q90] Paris: Paris is the capital and largest city of France.\n[Q142] France: France is a country in Western Europe.\n\nQuestion: What is the capital of France?\nAnswer:"
	exampleReply = "Paris [Q90]"
)

// Messages are the chat messages sent for question and sources.
func Messages(question string, sources []Source) []chat.Message {
	return append(prefix(), chat.Message{Role: "user", Content: Prompt(question, sources)})
}

// prefix is the instruction and the worked example: the same bytes before
// every question, so that the model server reuses their cached state.
func prefix() []chat.Message {
	return []chat.Message{
		{Role: "system", Content: SystemPrompt},
		{Role: "user", Content: exampleUser},
		{Role: "assistant", Content: exampleReply},
	}
}

// EvidenceMessages are the chat messages sent for question and selected
// evidence: the same instruction and example as Messages (a fixed prefix,
// which the model server keeps cached), then the evidence by document.
func EvidenceMessages(question string, ev []evidence.Sentence) []chat.Message {
	var b strings.Builder
	b.WriteString("Sources:\n")
	evidence.Render(&b, ev)
	fmt.Fprintf(&b, "\nQuestion: %s\nAnswer:", strings.TrimSpace(question))
	return append(prefix(), chat.Message{Role: "user", Content: b.String()})
}

// Prompt is the user message: the sources by id, then the question.
func Prompt(question string, sources []Source) string {
	var b strings.Builder
	b.WriteString("Sources:\n")
	for _, s := range sources {
		fmt.Fprintf(&b, "[%s] %s: %s\n", s.ID, s.Title, strings.Join(strings.Fields(s.Text), " "))
	}
	fmt.Fprintf(&b, "\nQuestion: %s\nAnswer:", strings.TrimSpace(question))
	return b.String()
}

// Answer answers question from docs, best first. A trusted graph answer
// (opts.Graph) comes back at once; otherwise the generator reads the
// evidence (opts.EvidenceTokens > 0, with an encoder configured) or the
// first Config.Sources documents' heads. With onDelta set, the reply
// streams through it as the model writes it (uncleaned; a graph answer is
// one piece); the returned Answer is cleaned either way. A generator that
// is missing, unreachable or failing is an errs.Unavailable error; the
// context's own deadline or cancellation comes back as it is.
func (a *Answerer) Answer(ctx context.Context, question string, docs []Source, opts Options, onDelta func(string) error) (Answer, error) {
	if err := a.Check(); err != nil {
		return Answer{}, err
	}
	if g := opts.Graph; g != nil && g.Trusted {
		text := g.Label + " [" + g.Doc + "]"
		if onDelta != nil {
			if err := onDelta(text); err != nil {
				return Answer{}, err
			}
		}
		return Answer{Text: text, Citations: []string{g.Doc}, Shown: []string{g.Doc}, Source: SourceGraph, Path: g.Path}, nil
	}
	if len(docs) == 0 {
		return Answer{Text: "The retrieval found no documents to answer from.", Source: SourceReader}, nil
	}
	msgs, ids, ev, err := a.prompt(ctx, question, docs, opts)
	if err != nil {
		return Answer{}, err
	}
	var out string
	if onDelta != nil {
		out, err = a.cfg.Generator.Stream(ctx, msgs, onDelta)
	} else {
		out, err = a.cfg.Generator.Complete(ctx, msgs)
	}
	if err != nil {
		if ctx.Err() != nil {
			return Answer{}, ctx.Err()
		}
		var se *errs.Error
		if errors.As(err, &se) {
			return Answer{}, err // the stream's consumer failed (a client gone, an oversized reply)
		}
		return Answer{}, &errs.Error{Code: errs.Unavailable, Err: fmt.Errorf("generator: %w", err),
			Message: "the generator is unavailable or failed; POST /v1/retrieve still works", RetryAfter: 5e9}
	}
	text, cited, dropped := Cite(chat.StripThinking(out), ids)
	return Answer{Text: text, Citations: cited, Dropped: dropped, Shown: ids, Source: SourceReader, Evidence: ev}, nil
}

// Messages returns the chat messages Answer would send for question and
// docs, the ids of the documents they show and the evidence selected (nil
// for documents' heads). It asks no generator, so that the evaluation can
// key a cache by the exact prompt.
func (a *Answerer) Messages(ctx context.Context, question string, docs []Source, opts Options) ([]chat.Message, []string, []evidence.Sentence, error) {
	if len(docs) == 0 {
		return nil, nil, nil, nil
	}
	return a.prompt(ctx, question, docs, opts)
}

func (a *Answerer) prompt(ctx context.Context, question string, docs []Source, opts Options) ([]chat.Message, []string, []evidence.Sentence, error) {
	if opts.EvidenceTokens > 0 && a.cfg.Encoder != nil {
		cfg := a.cfg.Evidence
		cfg.Tokens = min(opts.EvidenceTokens, MaxEvidenceTokens)
		in := make([]evidence.Doc, len(docs))
		for i, d := range docs {
			in[i] = evidence.Doc{ID: d.ID, Title: d.Title, Text: d.Text, Facts: d.Facts}
		}
		ev, err := evidence.Select(ctx, a.cfg.Encoder, question, in, cfg)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, nil, ctx.Err()
			}
			return nil, nil, nil, fmt.Errorf("answer: select evidence: %w", err)
		}
		if len(ev) > 0 {
			var ids []string
			for i, s := range ev {
				if i == 0 || s.Doc != ev[i-1].Doc {
					ids = append(ids, s.Doc)
				}
			}
			return EvidenceMessages(question, ev), ids, ev, nil
		}
	}
	shown := docs[:min(len(docs), a.cfg.Sources)]
	srcs := make([]Source, len(shown))
	ids := make([]string, len(shown))
	for i, d := range shown {
		srcs[i] = Source{ID: d.ID, Title: d.Title, Text: clipChars(d.Text, a.cfg.SourceChars)}
		ids[i] = d.ID
	}
	return Messages(question, srcs), ids, nil, nil
}

func clipChars(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	if i := strings.LastIndexByte(string(r), ' '); i > n/2 {
		return string(r)[:i] + " ..."
	}
	return string(r) + " ..."
}

var bracketRe = regexp.MustCompile(`\s*\[([^\[\]\n]{1,200})\]`)

// Cite checks the bracketed citations of text against ids (the documents the
// model was shown). A bracket whose items are all ids, or 1-based positions
// in ids (small models cite "[2]"), is a citation: its known items are kept
// (positions rewritten as ids), unknown ones are dropped and removed from the
// text. Brackets that name no id and no position, such as "[sic]", stay.
func Cite(text string, ids []string) (clean string, cited, dropped []string) {
	known := map[string]bool{}
	for _, id := range ids {
		known[id] = true
	}
	seen := map[string]bool{}
	clean = bracketRe.ReplaceAllStringFunc(text, func(m string) string {
		inner := bracketRe.FindStringSubmatch(m)[1]
		items := strings.FieldsFunc(inner, func(r rune) bool { return r == ',' || r == ';' })
		var keep []string
		citation := true
		for _, it := range items {
			it = strings.TrimSpace(it)
			id, ok := "", false
			switch {
			case known[it]:
				id, ok = it, true
			case positional(it, len(ids)) > 0 && !known[it]:
				id, ok = ids[positional(it, len(ids))-1], true
			case looksLikeID(it):
				dropped = append(dropped, it)
				continue
			default:
				citation = false
			}
			if ok {
				keep = append(keep, id)
				if !seen[id] {
					seen[id] = true
					cited = append(cited, id)
				}
			}
		}
		if !citation {
			return m
		}
		if len(keep) == 0 {
			return ""
		}
		lead := m[:len(m)-len(strings.TrimLeft(m, " \t"))]
		return lead + "[" + strings.Join(keep, ", ") + "]"
	})
	return strings.TrimSpace(clean), cited, dropped
}

// positional returns n when s is "n" (or "Source n", "Document n") with 1 <= n <= count, else 0.
func positional(s string, count int) int {
	low := strings.ToLower(s)
	for _, p := range []string{"source ", "document ", "doc ", "passage "} {
		low = strings.TrimPrefix(low, p)
	}
	n, err := strconv.Atoi(strings.TrimSpace(low))
	if err != nil || n < 1 || n > count {
		return 0
	}
	return n
}

var idRe = regexp.MustCompile(`^(Q\d+|[A-Za-z][\w.-]*\d[\w.-]*|\d+)$`)

// looksLikeID reports whether s is shaped like a document id (a QID, a token
// with a digit, a number) rather than words, so that an invented one is
// dropped while a bracketed remark is left alone.
func looksLikeID(s string) bool { return idRe.MatchString(s) }
