package pipeline

import "github.com/dmar-kg/dmar/internal/kg"

// Result is the answer to one retrieval: the evidence and why.
type Result struct {
	Query             string             `json:"query"`
	Results           []Doc              `json:"results"`
	Anchors           []Anchor           `json:"anchors"`
	QueryEntities     []QueryEntity      `json:"query_entities"`
	QuerySubgraphs    []kg.Subgraph      `json:"query_subgraphs"`
	ReformulatedQuery string             `json:"reformulated_query"`
	Reformulator      string             `json:"reformulator"` // the one that produced it
	Fallbacks         []Fallback         `json:"fallbacks"`
	TimingsMS         map[string]float64 `json:"timings_ms"`
	Options           Options            `json:"options"`
	Neo4j             *Statement         `json:"neo4j,omitempty"`
	// Neo4jPaths draws in Neo4j Browser the paths the results name
	// (breakdown.paths), with a graph backend that can (kg.Inspector).
	Neo4jPaths  *Statement `json:"neo4j_paths,omitempty"`
	RetrievalID string     `json:"retrieval_id,omitempty"` // set when persisted
	// EntStd is, per stage (first, second), the population standard
	// deviation of the raw structural score ent over that stage's candidates
	// (with the structural path on): how much ent tells the candidates apart;
	// first_nonzero is the same over the candidates with ent > 0, and
	// first_distinct the share of distinct values among those (1: no ties).
	// It is not part of the API's response.
	EntStd map[string]float64 `json:"-"` // for dmar eval; not on the wire
}

// Doc is a scored document with its score breakdown.
type Doc struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Text      string    `json:"text"`
	Rank      int       `json:"rank"` // 1-based
	Score     float64   `json:"score"`
	Breakdown Breakdown `json:"breakdown"`
	Entities  []string  `json:"entities,omitempty"`
}

// Breakdown explains a score: fused = gate.semantic*z_semantic + gate.structural*z_structural.
type Breakdown struct {
	Semantic    float64 `json:"semantic"`   // cos(enc(Q), enc(D))
	Structural  float64 `json:"structural"` // ent = (1/|G_Q|) sum phi_j
	ZSemantic   float64 `json:"z_semantic"`
	ZStructural float64 `json:"z_structural"`
	Gate        Weights `json:"gate"`
	Stage       string  `json:"stage"`        // "first" (anchor scoring) or "second" (final reranking)
	SearchScore float64 `json:"search_score"` // the backend's score in that stage's search
	Explain     string  `json:"explain,omitempty"`
	InFirst     bool    `json:"in_first_stage,omitempty"` // also among the stage-1 candidates
	Anchor      bool    `json:"anchor,omitempty"`         // also an anchor
	// Source is "kg" when the graph channel reached the document, and Graph
	// the path that did (graph_recall on; kgchannel.go).
	Source string     `json:"source,omitempty"`
	Graph  *GraphPath `json:"graph,omitempty"`
	// Text is what the text graph channel says of the document (text_graph
	// on; textchannel.go): its score, rank and the path that carried it.
	// Source is "text" when only that channel reached it.
	Text *TextHit `json:"text_graph,omitempty"`
	// Paths are the best few KG paths from a query entity to one of the
	// document's entities, best first (paths.go); empty when none reaches
	// it. Set on results and anchors.
	Paths []NamedPath `json:"paths"`
	// Rank says how the learned ranker saw the document (final_rank
	// learned; finalrank.go); absent otherwise.
	Rank *RankBreakdown `json:"ranker,omitempty"`
}

// Weights are the gate's fusion weights.
type Weights struct {
	Semantic   float64 `json:"semantic"`
	Structural float64 `json:"structural"`
}

// Anchor is a selected anchor document with its structural explanation.
type Anchor struct {
	Doc
	Snippet string `json:"snippet"`
	// Phi is the Shapley value of each query subgraph in the anchor's game.
	Phi      []Phi `json:"phi"`
	PhiExact bool  `json:"phi_exact"`
	// Subgraphs are the anchor's document subgraphs closest to the query's.
	Subgraphs []kg.Subgraph `json:"subgraphs"`
}

// Phi is one query subgraph's Shapley value.
type Phi struct {
	QID   string  `json:"qid"`
	Label string  `json:"label"`
	Phi   float64 `json:"phi"`
}

// QueryEntity is an entity linked in the query.
type QueryEntity struct {
	QID     string `json:"qid"`
	Label   string `json:"label"`
	Surface string `json:"surface"`
	Start   int    `json:"start"`
	End     int    `json:"end"`
	// Confidence is the context linker's (option linking=context); absent
	// for exact linking.
	Confidence float64 `json:"confidence,omitempty"`
}

// Fallback says that a degradation or fallback fired, and why.
type Fallback struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Statement is a graph query that shows part of a retrieval in the graph's
// own tool (Neo4j Browser): the anchors' subgraphs, or the named paths.
type Statement struct {
	Cypher string         `json:"cypher"`
	Params map[string]any `json:"params"`
}
