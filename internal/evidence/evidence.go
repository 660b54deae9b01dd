// Package evidence picks what a reader is shown: the sentences of the
// retrieved documents that answer a question, within a budget of reader
// tokens, and the knowledge graph's facts along the paths that found them.
//
// On two CPU cores a 1.5B reader reads about 70 prompt tokens a second, so
// every token shown costs time: the heads of three documents (about 375
// tokens) made an answer take six seconds, while the sentences that answer
// the question are usually a handful. The sentences are scored with the
// encoder the retrieval already loaded, in one batched call.
package evidence

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/vec"
)

// Encoder embeds texts; scoring.Encoder implements it.
type Encoder interface {
	Encode(ctx context.Context, texts []string) ([][]float32, error)
}

// Doc is one retrieved document, best first, with the graph's facts about
// it: lines "subject - relation - object" along the path that reached it.
type Doc struct {
	ID, Title, Text string
	Facts           []string
}

// Sentence is one piece of evidence as the reader is shown it. Index is the
// sentence's place among Split(doc.Text) (from 0), or -1 for a fact.
type Sentence struct {
	Doc   string
	Title string
	Index int
	Text  string
	Score float64
	Fact  bool
}

// Config bounds a selection; zero fields take the defaults.
type Config struct {
	// Docs are the documents whose sentences compete (default 5).
	Docs int
	// Tokens is the budget of reader tokens for the selected sentences,
	// facts and the documents' headers (default DefaultTokens).
	Tokens int
	// Facts bounds the graph facts shown (default 2): they are short and
	// come first, as they are what the graph knows.
	Facts int
	// SentenceChars clips a sentence (a document without sentence ends is
	// one long sentence) before it is scored and shown (default 320).
	SentenceChars int
	// PerDoc bounds the sentences of one document that are scored (default
	// 40), so that one long document costs the encoder no more than that.
	PerDoc int
	// Lead is added to the score of each document's first sentence, the one
	// that names its subject; RankDecay is subtracted once per place a
	// document stands below the first, so that the retrieval's order
	// counts beside the sentence's match.
	Lead, RankDecay float64
}

// Default is the selection's shape POST /v1/answer and /v1/verify use
// (Tokens is each request's budget), chosen on the tune halves
// (docs/eval/end-to-end.md).
var Default = Config{Docs: 5, Lead: 0.1, RankDecay: 0.05}

// DefaultTokens is the default budget: about 160 reader tokens of evidence.
const DefaultTokens = 160

func (c Config) withDefaults() Config {
	if c.Docs <= 0 {
		c.Docs = 5
	}
	if c.Tokens <= 0 {
		c.Tokens = DefaultTokens
	}
	if c.Facts < 0 {
		c.Facts = 0
	} else if c.Facts == 0 {
		c.Facts = 2
	}
	if c.SentenceChars <= 0 {
		c.SentenceChars = 320
	}
	if c.PerDoc <= 0 {
		c.PerDoc = 40
	}
	return c
}

// ErrNoEncoder is returned by Select without an encoder.
var ErrNoEncoder = errors.New("evidence: no encoder")

// Split splits a document's text into sentences as FEVER's evidence counts
// them: after every ". ", "! " or "? " (the space dropped, the mark kept).
// A sentence's index is its place in this list; empty sentences keep their
// place, so that indices match the data's.
func Split(text string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(text); i++ {
		switch text[i] {
		case '.', '!', '?':
			if text[i+1] == ' ' {
				out = append(out, text[start:i+1])
				start = i + 2
			}
		}
	}
	return append(out, text[start:])
}

// Tokens estimates the reader tokens of s: about four characters a token,
// as byte-pair vocabularies of current small models give for English
// (dmar bench answer prints the reader's own counts beside the budget).
func Tokens(s string) int {
	n := utf8.RuneCountInString(s)
	if n == 0 {
		return 0
	}
	return (n + 3) / 4
}

// Header is the line before a document's evidence in a prompt; its tokens
// count against the budget.
func Header(id, title string) string { return "[" + id + "] " + title + ":" }

// Select picks the evidence for question from the first cfg.Docs documents:
// their graph facts first (at most cfg.Facts, best document first), then
// sentences by cos(enc(question), enc(title: sentence)) while they fit in
// cfg.Tokens, counting each document's header once. The result is in
// document order, facts before sentences, sentences in text order. A
// document with no sentence end is one sentence, clipped.
func Select(ctx context.Context, enc Encoder, question string, docs []Doc, cfg Config) ([]Sentence, error) {
	cfg = cfg.withDefaults()
	if enc == nil {
		return nil, ErrNoEncoder
	}
	docs = docs[:min(len(docs), cfg.Docs)]
	cands := candidates(docs, cfg)
	if err := score(ctx, enc, question, cands, cfg); err != nil {
		return nil, err
	}
	b := budget{docs: docs, left: cfg.Tokens, headed: map[int]bool{}}
	for i, d := range docs {
		for _, f := range d.Facts {
			f = Clip(strings.Join(strings.Fields(f), " "), cfg.SentenceChars)
			if f != "" && b.facts < cfg.Facts && b.take(cand{i, Sentence{Doc: d.ID, Title: d.Title, Index: -1, Text: f, Fact: true}}) {
				b.facts++
			}
		}
	}
	// Best first; among equals the better document, then the earlier sentence.
	sort.SliceStable(cands, func(a, b int) bool {
		if cands[a].s.Score != cands[b].s.Score {
			return cands[a].s.Score > cands[b].s.Score
		}
		return cands[a].doc < cands[b].doc
	})
	for _, c := range cands {
		b.take(c)
	}
	picked := b.picked
	sort.SliceStable(picked, func(a, b int) bool {
		pa, pb := picked[a], picked[b]
		if pa.doc != pb.doc {
			return pa.doc < pb.doc
		}
		if pa.s.Fact != pb.s.Fact {
			return pa.s.Fact
		}
		return pa.s.Index < pb.s.Index
	})
	out := make([]Sentence, len(picked))
	for i, p := range picked {
		out[i] = p.s
	}
	return out, nil
}

// cand is a sentence of the doc-th document.
type cand struct {
	doc int
	s   Sentence
}

// candidates are the documents' non-empty sentences, clipped, at most
// cfg.PerDoc a document, in document and text order.
func candidates(docs []Doc, cfg Config) []cand {
	var cands []cand
	for i, d := range docs {
		n := 0
		for j, s := range Split(d.Text) {
			s = strings.Join(strings.Fields(s), " ")
			if s == "" {
				continue
			}
			if n == cfg.PerDoc {
				break
			}
			n++
			cands = append(cands, cand{i, Sentence{Doc: d.ID, Title: d.Title, Index: j, Text: Clip(s, cfg.SentenceChars)}})
		}
	}
	return cands
}

// score sets each candidate's score: cos(enc(question), enc(title: sentence)),
// less cfg.RankDecay a place below the first document, plus cfg.Lead for a
// document's first sentence; one batched encoder call.
func score(ctx context.Context, enc Encoder, question string, cands []cand, cfg Config) error {
	if len(cands) == 0 {
		return nil
	}
	texts := make([]string, len(cands)+1)
	texts[0] = strings.TrimSpace(question)
	for i, c := range cands {
		texts[i+1] = c.s.Title + ": " + c.s.Text
	}
	vecs, err := enc.Encode(ctx, texts)
	if err != nil {
		return fmt.Errorf("evidence: encode %d sentences: %w", len(cands), err)
	}
	if len(vecs) != len(texts) {
		return fmt.Errorf("evidence: the encoder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	for i := range cands {
		cands[i].s.Score = vec.Cosine64(vecs[0], vecs[i+1]) - cfg.RankDecay*float64(cands[i].doc)
		if i == 0 || cands[i-1].doc != cands[i].doc {
			cands[i].s.Score += cfg.Lead
		}
	}
	return nil
}

// budget takes evidence while it fits, counting each document's header once.
type budget struct {
	docs   []Doc
	left   int
	facts  int
	headed map[int]bool
	picked []cand
}

func (b *budget) take(c cand) bool {
	n := Tokens(c.s.Text) + 1
	if !b.headed[c.doc] {
		n += Tokens(Header(b.docs[c.doc].ID, b.docs[c.doc].Title)) + 1
	}
	if n > b.left {
		return false
	}
	b.left -= n
	b.headed[c.doc] = true
	b.picked = append(b.picked, c)
	return true
}

// Render writes the evidence as a prompt's sources, one line a document:
// its header, then its facts and sentences.
func Render(b *strings.Builder, ev []Sentence) {
	for i, s := range ev {
		if i == 0 || s.Doc != ev[i-1].Doc {
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(Header(s.Doc, s.Title))
		}
		b.WriteByte(' ')
		b.WriteString(s.Text)
		if s.Fact {
			b.WriteByte('.')
		}
	}
	if len(ev) > 0 {
		b.WriteByte('\n')
	}
}

// Step is one edge of a labelled path: the relation's label and whether
// the path walks it against the graph's direction.
type Step struct {
	Relation string
	Backward bool
}

// FactLines turns a labelled path, as the retrieval explains it
// ("A -[relation]-> B -[relation of]-> C", a backward step's relation
// followed by " of"), with its steps, into one fact a step: "subject -
// relation - object", in the direction the graph stores it. A path that
// does not match its steps gives no facts.
func FactLines(path string, steps []Step) []string {
	if len(steps) == 0 {
		return nil
	}
	nodes := make([]string, 0, len(steps)+1)
	rest := path
	for _, st := range steps {
		piece := " -[" + st.Relation
		if st.Backward {
			piece += " of"
		}
		piece += "]-> "
		i := strings.Index(rest, piece)
		if i < 0 {
			return nil
		}
		nodes = append(nodes, strings.TrimSpace(rest[:i]))
		rest = rest[i+len(piece):]
	}
	nodes = append(nodes, strings.TrimSpace(rest))
	out := make([]string, 0, len(steps))
	for i, st := range steps {
		from, to := nodes[i], nodes[i+1]
		if from == "" || to == "" || strings.TrimSpace(st.Relation) == "" {
			return nil
		}
		if st.Backward {
			from, to = to, from
		}
		out = append(out, from+" - "+strings.TrimSpace(st.Relation)+" - "+to)
	}
	return out
}

// Clip keeps the first n characters of s, cut at a word boundary where one
// is in its second half, and marks the cut with " ...".
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := string([]rune(s)[:n])
	if i := strings.LastIndexByte(r, ' '); i > n/2 {
		r = r[:i]
	}
	return r + " ..."
}
