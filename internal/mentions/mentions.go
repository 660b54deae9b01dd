// Package mentions is the bridge between documents and the knowledge graph:
// which entities each document mentions and where (title, first sentence,
// elsewhere), and which documents mention an entity. It declares the port
// (Reader, Writer) that the embedded index (memkg.Mentions) and Neo4j's
// MENTIONS edges (neo4jkg) implement, and how a document's mentions are
// located from its stored links (Locate). The graph channel reads it to
// reach the documents that mention a reached entity, not only the page whose
// ID is the entity's QID (docs/textgraph.md).
package mentions

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// Version names the rules Locate follows; snapshots of located mentions
// made under other rules are located again.
const Version = "mentions-1"

// Place is where a document mentions an entity, the best of its mentions:
// a larger Place is a more prominent one.
type Place uint8

const (
	// Body is a mention past the first sentence only.
	Body Place = iota
	// Lead is a mention in the first sentence of the text.
	Lead
	// Title is a mention in the title.
	Title
)

// String names the place as the API and explanations do.
func (p Place) String() string {
	switch p {
	case Title:
		return "title"
	case Lead:
		return "first sentence"
	default:
		return "text"
	}
}

// Entity is one entity a document mentions, at its best place.
type Entity struct {
	QID   string `json:"qid"`
	Place Place  `json:"place"`
}

// Document is one document's mentions, each entity once, sorted by QID.
type Document struct {
	ID       string
	Title    string
	Mentions []Entity
}

// Mention is a document that mentions an entity, and where.
type Mention struct {
	Doc   string `json:"doc"`
	Place Place  `json:"place"`
}

// Found is what Mentioning answers for a set of entities.
type Found struct {
	// Docs are, by QID, the documents that mention the entity: best place
	// first, then document ID, at most the limit asked for.
	Docs map[string][]Mention
	// DF is, by QID, how many documents mention the entity (all of them,
	// beyond the limit).
	DF map[string]int
	// N is the number of documents in the index, those that mention
	// nothing included.
	N int
}

// Reader is the port the pipeline reads mentions through.
//
// Methods honour ctx. A backend that is down returns an error whose chain
// holds an errs.Unavailable *errs.Error. Unknown QIDs and document IDs are
// not errors: they are absent from the answers.
type Reader interface {
	// Mentioning returns the documents that mention each of qids (at most
	// limit per entity, limit >= 1), their document frequencies and the
	// index's size, in one call.
	Mentioning(ctx context.Context, qids []string, limit int) (Found, error)
	// Of returns the mentions of the documents ids, by document ID (a
	// document that mentions nothing is absent).
	Of(ctx context.Context, ids []string) (map[string][]Entity, error)
}

// Writer keeps an index exact under document writes. Replace sets each
// document's mentions to exactly those given (a document with none is still
// counted in N); mentions of entities unknown to the graph are dropped.
// Delete removes documents; unknown IDs are ignored.
type Writer interface {
	Replace(ctx context.Context, docs []Document) error
	Delete(ctx context.Context, ids []string) error
}

// Index is a Reader that a Writer keeps exact.
type Index interface {
	Reader
	Writer
}

// SentenceMaxBytes bounds the first sentence that Locate links: a text without
// a sentence end in its first SentenceMaxBytes bytes has that much as its lead.
const SentenceMaxBytes = 400

// FirstSentence is the first sentence of text: up to and including the first ". ",
// "! ", "? " or line break, at most SentenceMaxBytes bytes (cut at a character
// boundary).
func FirstSentence(text string) string {
	end := len(text)
	for i := 0; i+1 < len(text) && i < SentenceMaxBytes; i++ {
		c := text[i]
		if c == '\n' {
			end = i
			break
		}
		if (c == '.' || c == '!' || c == '?') && (text[i+1] == ' ' || text[i+1] == '\n') {
			end = i + 1
			break
		}
	}
	if end > SentenceMaxBytes {
		end = SentenceMaxBytes
		for end > 0 && !isRuneStart(text[end]) {
			end--
		}
	}
	return text[:end]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Locate is d's mentions: each of its linked entities (d.Entities, as the
// corpus was linked) at Title when linking d's title finds it, else Lead when
// linking the first sentence of its text does, else Body. Linking the two
// short texts again, rather than storing every mention's offsets with the
// document, keeps the stored documents as they are; g must be the graph the
// corpus was linked with.
func Locate(ctx context.Context, g kg.Graph, d retrieval.Document) (Document, error) {
	out := Document{ID: d.ID, Title: d.Title, Mentions: make([]Entity, 0, len(d.Entities))}
	if len(d.Entities) == 0 {
		return out, nil
	}
	at := map[string]Place{}
	for _, part := range []struct {
		text  string
		place Place
	}{{d.Title, Title}, {FirstSentence(d.Text), Lead}} {
		if strings.TrimSpace(part.text) == "" {
			continue
		}
		ms, err := g.Link(ctx, part.text)
		if err != nil {
			return Document{}, fmt.Errorf("locate the mentions of document %s: %w", d.ID, err)
		}
		for _, m := range ms {
			if p, ok := at[m.QID]; !ok || part.place > p {
				at[m.QID] = part.place
			}
		}
	}
	for _, q := range d.Entities {
		out.Mentions = append(out.Mentions, Entity{QID: q, Place: at[q]})
	}
	slices.SortFunc(out.Mentions, func(a, b Entity) int { return strings.Compare(a.QID, b.QID) })
	out.Mentions = slices.CompactFunc(out.Mentions, func(a, b Entity) bool { return a.QID == b.QID })
	return out, nil
}

// LocateAll is Locate for each of docs, checking ctx between documents.
func LocateAll(ctx context.Context, g kg.Graph, docs []retrieval.Document) ([]Document, error) {
	out := make([]Document, len(docs))
	for i, d := range docs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var err error
		if out[i], err = Locate(ctx, g, d); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// IDF is how specific a mention of an entity that df of n documents mention
// is: ln((n+1)/(df+1)) / ln(n+1), 1 for an entity no other document
// mentions, 0 for one that every document does. An entity half the corpus
// mentions gets about ln 2 / ln n.
func IDF(df, n int) float64 {
	if n <= 0 {
		return 0
	}
	df = min(max(df, 0), n)
	return math.Log(float64(n+1)/float64(df+1)) / math.Log(float64(n+1))
}

// Less orders mentions as Found.Docs lists them: best place first, then
// document ID.
func Less(a, b Mention) int {
	if a.Place != b.Place {
		return int(b.Place) - int(a.Place)
	}
	return strings.Compare(a.Doc, b.Doc)
}
