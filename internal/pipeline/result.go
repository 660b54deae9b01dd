package pipeline

import (
	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/kg"
)

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
	// Candidates are the ids each source proposed before fusion ("recall":
	// the stage-1 search; "kg", "text": the graph channels; "second": the
	// paper's stage-2 search), for dmar eval's
	// miss analysis; not on the wire.
	Candidates map[string][]string `json:"-"`
}

// The response's parts are the API's types (internal/api), defined once:
// what the pipeline builds is what the wire carries.
type (
	// Doc is a scored document with its score breakdown.
	Doc = api.Doc
	// Breakdown explains a score: fused = gate.semantic*z_semantic + gate.structural*z_structural.
	Breakdown = api.Breakdown
	// Weights are the gate's fusion weights.
	Weights = api.Weights
	// Anchor is a selected anchor document with its structural explanation.
	Anchor = api.Anchor
	// Phi is one query subgraph's Shapley value.
	Phi = api.Phi
	// QueryEntity is an entity linked in the query.
	QueryEntity = api.QueryEntity
	// Fallback says that a degradation or fallback fired, and why.
	Fallback = api.Fallback
	// Statement is a graph query that shows part of a retrieval in the
	// graph's own tool (Neo4j Browser).
	Statement = api.Statement
	// GraphPath is the path that brought a document in through the graph
	// channel, and its scores (kgchan).
	GraphPath = api.GraphPath
	// Bridge is how the graph channel reached a document that mentions a
	// reached entity (graph_mentions; kgchan).
	Bridge = api.GraphBridge
	// NamedPath is a KG path from a query entity to one of a document's
	// entities, and its question relevance (paths.go).
	NamedPath = api.NamedPath
	// TextHit is what the text channel says of one document it reached
	// (textchan).
	TextHit = api.TextHit
	// RankBreakdown says how the learned ranker saw a result (finalrank.go).
	RankBreakdown = api.RankBreakdown
)

// APISubgraph is g as the API writes it: nodes and edges arrays, never
// null (a subgraph of one node has no edges, and the OpenAPI document
// promises an array).
func APISubgraph(g kg.Subgraph) api.Subgraph {
	out := api.Subgraph{Root: g.Root, Truncated: g.Truncated, Nodes: make([]api.Node, len(g.Nodes)), Edges: make([]api.Edge, len(g.Edges))}
	for i, n := range g.Nodes {
		out.Nodes[i] = api.Node{QID: n.QID, Label: n.Label, Hop: n.Hop, Hub: n.Hub}
	}
	for i, e := range g.Edges {
		out.Edges[i] = api.Edge{From: e.From, To: e.To, PID: e.PID, Label: e.Label}
	}
	return out
}
