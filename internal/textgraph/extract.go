// Package textgraph is the graph dmar builds from a corpus's text where the
// knowledge graph lacks its entities (HippoRAG 2's design, joined to the
// KG): each passage's named entities and salient noun phrases become phrase
// nodes (those that name a KG entity become that entity's node), with edges
// passage-phrase, phrase-phrase within a sentence (or an extracted triple's
// relation), synonym edges between phrases whose embeddings are close, and
// the KG's own edges between linked entities. Passages are ranked over it by
// personalized PageRank from the question's entities and phrases and the
// dense retriever's top passages (Rank). The graph is read through the
// Store port: in memory (Memory) or on Neo4j (neo4jkg), whose conformance
// suite is textgraphtest. docs/textgraph.md says what was chosen and why.
package textgraph

import (
	"context"
	"strings"
	"syscall"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Kind is what an extractor found a phrase to be.
type Kind uint8

const (
	// Named is a named entity (a person, place, work, organisation, date).
	Named Kind = iota
	// Noun is a salient noun phrase that names no entity.
	Noun
)

// Phrase is one phrase of a passage, as written, with the sentence it is
// in (0-based, in the passage's own sentence order).
type Phrase struct {
	Text     string `json:"text"`
	Kind     Kind   `json:"kind"`
	Sentence int    `json:"sentence"`
}

// Triple is an extracted (subject, relation, object) statement, its
// subject and object among the passage's phrases.
type Triple struct {
	Subject, Relation, Object string
}

// Extraction is what an extractor found in one passage.
type Extraction struct {
	Phrases []Phrase `json:"phrases"`
	Triples []Triple `json:"triples,omitempty"`
}

// Passage is a text an extractor reads: a corpus document's title and text.
type Passage struct {
	ID, Title, Text string
}

// Extractor finds the phrases of passages. Extract returns one Extraction
// per passage, in order; it honours ctx and fails whole (an extractor that
// cannot run is an error naming what is missing).
type Extractor interface {
	Name() string
	Extract(ctx context.Context, ps []Passage) ([]Extraction, error)
}

// Key is the node key of a phrase: its normalised form (kg.NormalizeForm)
// without a leading article, so that "The Prestige", "the prestige" and
// "Prestige" meet; "" for a phrase that is no key (nothing left, or only
// stop words).
func Key(text string) string {
	k := kg.NormalizeForm(text)
	for _, a := range []string{"the ", "a ", "an "} {
		if strings.HasPrefix(k, a) && len(k) > len(a) {
			k = k[len(a):]
			break
		}
	}
	if !kg.Linkable(k) {
		return ""
	}
	return k
}

// sentences cuts text into sentences at ". ", "! ", "? " (a period after a
// single capital letter, "J. R. R.", does not end one) and line breaks,
// returning each sentence's byte range.
func sentences(text string) [][2]int {
	var out [][2]int
	start := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		end, next := -1, i+1
		switch {
		case c == '\n':
			end = i
		case (c == '.' || c == '!' || c == '?') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n'):
			if c == '.' && i >= 1 && isUpper(text[i-1]) && (i < 2 || !isLetter(text[i-2])) {
				continue // an initial
			}
			end = i + 1
		}
		if end < 0 {
			continue
		}
		if strings.TrimSpace(text[start:end]) != "" {
			out = append(out, [2]int{start, end})
		}
		start = max(end, next)
	}
	if strings.TrimSpace(text[start:]) != "" {
		out = append(out, [2]int{start, len(text)})
	}
	return out
}

func isUpper(c byte) bool  { return c >= 'A' && c <= 'Z' }
func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// PassageText is what an extractor reads of a passage: its title as the
// first sentence (a title names what the passage is about), then its text.
func PassageText(p Passage) string {
	if p.Title == "" {
		return p.Text
	}
	return p.Title + "\n" + p.Text
}

// CPUSeconds is this process's CPU time plus, for an extractor with a
// process of its own (spaCy's), that process's: on a shared machine, work
// per CPU second says what an idle core would do.
func CPUSeconds(ex Extractor) float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	s := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	if c, ok := ex.(interface{ CPUSeconds() float64 }); ok {
		s += c.CPUSeconds()
	}
	return s
}
