package kg

import (
	"context"
	"time"
)

// Inspector is implemented by graph backends that can show a retrieval's
// anchor subgraphs in their own tools (Neo4j Browser): a statement and its
// parameters that, run there, draw exactly those subgraphs.
type Inspector interface {
	SubgraphStatement(roots []string, p SubgraphParams) (statement string, params map[string]any)
}

// RetrievalRecord is a finished retrieval as a Recorder stores it.
type RetrievalRecord struct {
	ID           string
	Query        string
	Reformulated string
	At           time.Time
	Anchors      []AnchorRecord
}

// AnchorRecord is one anchor document of a RetrievalRecord.
type AnchorRecord struct {
	DocID    string
	Title    string
	Rank     int // 1-based
	Score    float64
	Entities []string // the QIDs the document mentions
}

// Recorder is implemented by graph backends that can persist retrievals for
// analysts to browse (request option persist: true).
type Recorder interface {
	RecordRetrieval(ctx context.Context, r RetrievalRecord) error
}
