// Package retrieval is dmar's document-search domain: documents, search
// queries and hits, and the Index port that every search backend implements
// (memindex in process, weaviate in production). It imports no backend.
package retrieval

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/samber/lo"
)

// Document is one corpus entry. Entities are linked once, at load time, and
// Vector is the sentence encoder's embedding of Title + Text, computed at load
// time too; both are stored with the document.
type Document struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Text     string    `json:"text"`
	Entities []string  `json:"entities,omitempty"` // linked QIDs, sorted, unique
	Vector   []float32 `json:"-"`
	// Metadata is the JSON object a live write gave the document, stored
	// by an index that keeps it (Weaviate, as a property, so that every
	// dmar replica over it reads the same). Read back, nil says the index
	// does not know it (the embedded index after a restart, an object
	// written before its collection had the property) and JSON null that
	// the document has none.
	Metadata json.RawMessage `json:"-"`
}

// Mode is the kind of search.
type Mode string

const (
	BM25   Mode = "bm25"
	Vector Mode = "vector"
	Hybrid Mode = "hybrid"
)

// Fusion is how hybrid search combines its lexical and vector result lists,
// as Weaviate names them.
type Fusion string

const (
	RelativeScore Fusion = "relativeScore" // min-max normalise each list, weighted sum
	RankedFusion  Fusion = "rankedFusion"  // weighted reciprocal rank, 1/(60+rank)
)

// Query is one search request.
type Query struct {
	Mode   Mode
	Text   string    // BM25 and hybrid
	Vector []float32 // vector and hybrid (the query's embedding)
	// Alpha weighs hybrid search: 1 is pure vector, 0 pure BM25 (Weaviate's convention).
	Alpha  float64
	Fusion Fusion
	Limit  int
	Filter Filter
	// WithVectors asks for the documents' stored vectors in the hits.
	WithVectors bool
}

// Filter restricts a search. Empty fields do not restrict.
type Filter struct {
	IDs         []string `json:"ids,omitempty"`          // only these documents
	AnyEntities []string `json:"any_entities,omitempty"` // documents linked to at least one of these QIDs
}

// Empty reports whether the filter restricts nothing.
func (f Filter) Empty() bool { return len(f.IDs) == 0 && len(f.AnyEntities) == 0 }

// Matcher is the filter as a test of one document, for the candidates that
// come from elsewhere than a search (a channel's).
func (f Filter) Matcher() func(Document) bool {
	ids, ents := lo.Keyify(f.IDs), lo.Keyify(f.AnyEntities)
	return func(d Document) bool {
		if _, ok := ids[d.ID]; len(ids) > 0 && !ok {
			return false
		}
		return len(ents) == 0 || lo.SomeBy(d.Entities, func(e string) bool { _, ok := ents[e]; return ok })
	}
}

// Hit is one search result, best first.
type Hit struct {
	Doc   Document `json:"doc"`
	Score float64  `json:"score"`
	// Explain is the backend's account of the score (Weaviate's explainScore).
	Explain string `json:"explain,omitempty"`
}

// Index is the port the pipeline searches through.
//
// Search returns at most q.Limit hits ordered by descending score, ties broken
// by document ID. An unreachable backend yields an error wrapping an
// errs.Unavailable *errs.Error. Both methods honour ctx.
type Index interface {
	Search(ctx context.Context, q Query) ([]Hit, error)
	// Documents returns the stored documents (with vectors) for ids, in the
	// order of ids; unknown ids are skipped.
	Documents(ctx context.Context, ids []string) ([]Document, error)
}

// CosineReader is implemented by index backends that compute cos(v, D)
// where the documents are stored (weaviate), so that a caller scoring many
// known documents by their similarity to v fetches none of them: the graph
// channel scores up to 2,000 reached documents and keeps 50, and fetching
// them from Weaviate with their vectors was about 8 KB of JSON each.
// Cosines returns cos(v, D) of every document among ids that passes f;
// unknown ids are absent. It honours ctx and fails as Search does.
type CosineReader interface {
	Cosines(ctx context.Context, v []float32, ids []string, f Filter) (map[string]float64, error)
}

// Writer loads documents into an index. Put is idempotent: putting a document
// with an existing ID replaces it.
type Writer interface {
	Put(ctx context.Context, docs []Document) error
	Count(ctx context.Context) (int, error)
}

// Validate checks a query before it reaches a backend.
func (q Query) Validate() error {
	switch q.Mode {
	case BM25:
		if q.Text == "" {
			return fmt.Errorf("bm25 search needs text")
		}
	case Vector:
		if len(q.Vector) == 0 {
			return fmt.Errorf("vector search needs a vector")
		}
	case Hybrid:
		if q.Alpha < 0 || q.Alpha > 1 {
			return fmt.Errorf("hybrid alpha %v is outside [0,1]", q.Alpha)
		}
		if q.Alpha < 1 && q.Text == "" {
			return fmt.Errorf("hybrid search with alpha < 1 needs text")
		}
		if q.Alpha > 0 && len(q.Vector) == 0 {
			return fmt.Errorf("hybrid search with alpha > 0 needs a vector")
		}
		switch q.Fusion {
		case "", RelativeScore, RankedFusion:
		default:
			return fmt.Errorf("unknown fusion %q (relativeScore or rankedFusion)", q.Fusion)
		}
	default:
		return fmt.Errorf("unknown search mode %q (bm25, vector or hybrid)", q.Mode)
	}
	if q.Limit <= 0 {
		return fmt.Errorf("limit must be positive, got %d", q.Limit)
	}
	return nil
}
