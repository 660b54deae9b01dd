package kg

import (
	"context"
	"time"
)

// Inspector is implemented by graph backends that can show a retrieval in
// their own tools (Neo4j Browser): statements and their parameters that, run
// there, draw exactly the anchors' subgraphs (SubgraphStatement) or exactly
// the named paths of the results (PathStatement).
type Inspector interface {
	SubgraphStatement(roots []string, p SubgraphParams) (statement string, params map[string]any)
	PathStatement(paths []Path) (statement string, params map[string]any)
}

// Path is a walk through the graph to draw: its edges in walk order, each as
// the graph stores it (From -[PID]-> To, whichever way the walk crossed it),
// and a name the statement returns with its nodes and relationships.
type Path struct {
	Name  string
	Edges []Edge
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
