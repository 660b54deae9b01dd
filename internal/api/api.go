// Package api is dmar's REST API as a Go client sees it: the JSON request and
// response types of every route and a Client that calls a running server.
// It is a leaf: it imports only the standard library, so that any program
// can use it without the pipeline, its models or its backends. The server
// (internal/server) converts its values to these types in one place.
package api

// RetrieveRequest is the body of POST /v1/retrieve: the query and any of the
// pipeline's options, flat. A nil option is left out of the body and keeps
// the server's default; Ptr makes a pointer from a literal.
type RetrieveRequest struct {
	Query string `json:"query"`
	// Method: dmar (the question-aware method, the service's default) |
	// paper (DMAR-SPEC.md's); the options named beside it override it.
	Method *string `json:"method,omitempty"`

	N *int `json:"n,omitempty"` // stage-1 candidates
	M *int `json:"m,omitempty"` // anchors
	P *int `json:"p,omitempty"` // stage-2 candidates
	K *int `json:"k,omitempty"` // results

	Hops      *int `json:"hops,omitempty"`
	MaxNodes  *int `json:"max_nodes,omitempty"`
	HubDegree *int `json:"hub_degree,omitempty"`

	Lambda  *float64 `json:"lambda,omitempty"`
	Shapley *string  `json:"shapley,omitempty"` // exact | montecarlo
	Samples *int     `json:"samples,omitempty"`
	Seed    *uint64  `json:"seed,omitempty"`

	Stage1      *string  `json:"stage1,omitempty"` // bm25 | hybrid
	Stage1Alpha *float64 `json:"stage1_alpha,omitempty"`
	Stage2      *string  `json:"stage2,omitempty"` // hybrid | vector
	Stage2Alpha *float64 `json:"stage2_alpha,omitempty"`
	// Stage2Vector: reformulated (enc(Q'), the method's) | question (enc(Q)).
	Stage2Vector *string `json:"stage2_vector,omitempty"`
	Fusion       *string `json:"fusion,omitempty"` // relativeScore | rankedFusion

	Reformulator *string  `json:"reformulator,omitempty"` // builtin | chat | none
	Gate         *string  `json:"gate,omitempty"`         // learned | fixed | evidence
	FixedAlpha   *float64 `json:"fixed_alpha,omitempty"`
	Structure    *string  `json:"structure,omitempty"` // gnn | ged | off
	Linking      *string  `json:"linking,omitempty"`   // exact | context

	SnippetChars       *int    `json:"snippet_chars,omitempty"`
	MaxAnchorSubgraphs *int    `json:"max_anchor_subgraphs,omitempty"`
	Filter             *Filter `json:"filter,omitempty"`
	Persist            *bool   `json:"persist,omitempty"`

	GraphRecall    *int     `json:"graph_recall,omitempty"` // 0 (off) | 1 | 2
	GraphRecallK   *int     `json:"graph_recall_k,omitempty"`
	GraphWeight    *float64 `json:"graph_weight,omitempty"`
	GraphBoost     *float64 `json:"graph_boost,omitempty"`
	GraphRelations *string  `json:"graph_relations,omitempty"` // plain | directed | none
	GraphRoots     *int     `json:"graph_roots,omitempty"`
	// GraphPopularity weighs ln(1 + degree) of a reached entity in its graph score.
	GraphPopularity *float64 `json:"graph_popularity,omitempty"`
	// GraphMentions weighs the documents that mention a reached entity (0: own pages only).
	GraphMentions *float64 `json:"graph_mentions,omitempty"`
	// TextGraph weighs the text graph channel's normalised score (0: off);
	// TextGraphK is how many documents it adds.
	TextGraph  *float64 `json:"text_graph,omitempty"`
	TextGraphK *int     `json:"text_graph_k,omitempty"`
	// TitleLinks: at most TitleLinks pages the ranker's best document
	// names follow it (0: off).
	TitleLinks *int `json:"title_links,omitempty"`
	// GraphRelationQuery: question (Q) | masked (Q without its linked mentions), what relation cosines read.
	GraphRelationQuery *string `json:"graph_relation_query,omitempty"`
	// StructureNeedsChannel: no graph-channel document, no structural score.
	StructureNeedsChannel *bool `json:"structure_needs_channel,omitempty"`
	// FinalRank: boost (fused score + graph_boost x graph score) | learned
	// (the learned ranker over every candidate found; dmar's).
	FinalRank *string `json:"final_rank,omitempty"`
}

// Ptr returns a pointer to v, for the options of a RetrieveRequest.
func Ptr[T any](v T) *T { return &v }

// Options are the options a retrieval ran with, every one set (the server's
// defaults where the request left one out).
type Options struct {
	Method string `json:"method,omitempty"` // dmar | paper: the preset the others started from

	N int `json:"n"`
	M int `json:"m"`
	P int `json:"p"`
	K int `json:"k"`

	Hops      int `json:"hops"`
	MaxNodes  int `json:"max_nodes"`
	HubDegree int `json:"hub_degree"`

	Lambda  float64 `json:"lambda"`
	Shapley string  `json:"shapley"`
	Samples int     `json:"samples"`
	Seed    uint64  `json:"seed"`

	Stage1       string  `json:"stage1"`
	Stage1Alpha  float64 `json:"stage1_alpha"`
	Stage2       string  `json:"stage2"`
	Stage2Alpha  float64 `json:"stage2_alpha"`
	Stage2Vector string  `json:"stage2_vector,omitempty"` // absent: reformulated
	Fusion       string  `json:"fusion"`

	Reformulator string  `json:"reformulator"`
	Gate         string  `json:"gate"`
	FixedAlpha   float64 `json:"fixed_alpha"`
	Structure    string  `json:"structure"`
	Linking      string  `json:"linking,omitempty"` // absent: exact

	SnippetChars       int    `json:"snippet_chars"`
	MaxAnchorSubgraphs int    `json:"max_anchor_subgraphs"`
	Filter             Filter `json:"filter"`
	Persist            bool   `json:"persist"`

	GraphRecall           int     `json:"graph_recall"`
	GraphRecallK          int     `json:"graph_recall_k"`
	GraphWeight           float64 `json:"graph_weight"`
	GraphBoost            float64 `json:"graph_boost"`
	GraphRelations        string  `json:"graph_relations"`
	GraphRoots            int     `json:"graph_roots,omitempty"`
	GraphPopularity       float64 `json:"graph_popularity,omitempty"`
	GraphMentions         float64 `json:"graph_mentions,omitempty"`
	TextGraph             float64 `json:"text_graph,omitempty"`
	TextGraphK            int     `json:"text_graph_k,omitempty"`
	TitleLinks            int     `json:"title_links,omitempty"`
	GraphRelationQuery    string  `json:"graph_relation_query,omitempty"` // absent: question
	StructureNeedsChannel bool    `json:"structure_needs_channel,omitempty"`
	FinalRank             string  `json:"final_rank,omitempty"` // absent: boost
}

// Filter restricts the documents a retrieval may return.
type Filter struct {
	IDs         []string `json:"ids,omitempty"`          // only these documents
	AnyEntities []string `json:"any_entities,omitempty"` // documents linked to at least one of these QIDs
}

// RetrieveResponse is the body of a successful POST /v1/retrieve: the
// evidence and why.
type RetrieveResponse struct {
	Query             string             `json:"query"`
	Results           []Doc              `json:"results"`
	Anchors           []Anchor           `json:"anchors"`
	QueryEntities     []QueryEntity      `json:"query_entities"`
	QuerySubgraphs    []Subgraph         `json:"query_subgraphs"`
	ReformulatedQuery string             `json:"reformulated_query"`
	Reformulator      string             `json:"reformulator"` // the one that produced it
	Fallbacks         []Fallback         `json:"fallbacks"`
	TimingsMS         map[string]float64 `json:"timings_ms"`
	Options           Options            `json:"options"`
	Neo4j             *Statement         `json:"neo4j,omitempty"`
	// Neo4jPaths draws in Neo4j Browser the paths the results name
	// (breakdown.paths); set with the Neo4j backend.
	Neo4jPaths  *Statement `json:"neo4j_paths,omitempty"`
	RetrievalID string     `json:"retrieval_id,omitempty"` // set when persisted
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
	Semantic    float64 `json:"semantic"`
	Structural  float64 `json:"structural"`
	ZSemantic   float64 `json:"z_semantic"`
	ZStructural float64 `json:"z_structural"`
	Gate        Weights `json:"gate"`
	Stage       string  `json:"stage"` // "first" (anchor scoring) or "second" (final reranking)
	SearchScore float64 `json:"search_score"`
	Explain     string  `json:"explain,omitempty"`
	InFirst     bool    `json:"in_first_stage,omitempty"`
	Anchor      bool    `json:"anchor,omitempty"`
	// Source is "kg" for a document the graph channel reached (graph_recall
	// on), and Graph the path that did.
	Source string     `json:"source,omitempty"`
	Graph  *GraphPath `json:"graph,omitempty"`
	// Text is what the text graph channel says of the document (text_graph on).
	Text *TextHit `json:"text_graph,omitempty"`
	// Paths are the best few KG paths (1 or 2 hops) from a query entity to
	// one of the document's entities, best first; empty when none reaches
	// it. Set on results and anchors.
	Paths []NamedPath `json:"paths"`
	// Rank says how the learned ranker saw the document (final_rank
	// learned); absent otherwise.
	Rank *RankBreakdown `json:"ranker,omitempty"`
}

// RankBreakdown is the learned ranker's view of a result: its score (the
// results' order) and where the document was found.
type RankBreakdown struct {
	// Score orders the results: the ranker's own (RankerScore), or with the
	// text graph channel fused (text_graph), the reciprocal-rank fusion.
	Score       float64 `json:"score"`
	RankerScore float64 `json:"ranker_score"`
	Stage1Rank  int     `json:"stage1_rank,omitempty"` // rank in the stage-1 search (Q); absent: not a hit
	Stage2Rank  int     `json:"stage2_rank,omitempty"` // rank in the stage-2 search (Q'); absent: not a hit
	GraphRank   int     `json:"graph_rank,omitempty"`  // rank in the graph channel; absent: not reached
	TextRank    int     `json:"text_rank,omitempty"`   // rank in the text graph channel; absent: not reached
	Own         bool    `json:"own_page,omitempty"`    // the page of an entity the query names
	NamedBy     string  `json:"named_by,omitempty"`    // the better-ranked document whose text names its title, which lifted it (title_links)
}

// NamedPath is a KG path from a query entity to one of a document's
// entities, scored by its question relevance as the graph channel scores
// paths.
type NamedPath struct {
	From      string      `json:"from"` // the query entity it starts from (a phi's qid when it roots a query subgraph)
	FromLabel string      `json:"from_label"`
	FromKind  string      `json:"from_kind"` // query_entity (linked in the query) | top_document (the top stage-1 document's entity)
	To        string      `json:"to"`        // the document's entity it ends at
	ToLabel   string      `json:"to_label"`
	Path      string      `json:"path"` // Q1 -[relation]-> Q2
	Text      string      `json:"text"` // the same with labels
	Steps     []GraphStep `json:"steps"`
	Relevance float64     `json:"relevance"`
}

// GraphPath is the path from a query entity that brought a document in
// through the graph channel.
type GraphPath struct {
	Path      string      `json:"path"`
	Steps     []GraphStep `json:"steps"`
	Relevance float64     `json:"relevance"`
	Score     float64     `json:"score"`
	// Popularity is the part of Score from the entity's degree (graph_popularity).
	Popularity float64 `json:"popularity,omitempty"`
	// Bridge, for a document reached through what it mentions
	// (graph_mentions), is the reached entity it mentions.
	Bridge *GraphBridge `json:"bridge,omitempty"`
}

// TextHit is what the text graph channel says of a document it reached.
type TextHit struct {
	Score float64 `json:"score"` // personalized PageRank
	Norm  float64 `json:"norm"`  // score over the channel's best
	Rank  int     `json:"rank"`
	Seed  string  `json:"seed"` // the best path's seed and why it is one
	Path  string  `json:"path"` // the path that carried most of the score
	Hops  int     `json:"hops"`
}

// GraphBridge is how the graph channel reached a document that mentions a
// reached entity: Relevance is the path's relevance times Weight.
type GraphBridge struct {
	Entity        string  `json:"entity"`
	Place         string  `json:"place"` // title | first sentence | text
	IDF           float64 `json:"idf"`
	Weight        float64 `json:"weight"` // graph_mentions x place weight x idf
	PathRelevance float64 `json:"path_relevance"`
}

// GraphStep is one edge of a GraphPath, walked From -> To.
type GraphStep struct {
	From      string  `json:"from"`
	PID       string  `json:"pid"`
	Label     string  `json:"label"`
	To        string  `json:"to"`
	Backward  bool    `json:"backward,omitempty"`
	Relevance float64 `json:"relevance"`
}

// Weights are the gate's fusion weights.
type Weights struct {
	Semantic   float64 `json:"semantic"`
	Structural float64 `json:"structural"`
}

// Anchor is a selected anchor document with its structural explanation.
type Anchor struct {
	Doc
	Snippet   string     `json:"snippet"`
	Phi       []Phi      `json:"phi"` // Shapley value of each query subgraph
	PhiExact  bool       `json:"phi_exact"`
	Subgraphs []Subgraph `json:"subgraphs"` // the anchor's subgraphs closest to the query's
}

// Phi is one query subgraph's Shapley value.
type Phi struct {
	QID   string  `json:"qid"`
	Label string  `json:"label"`
	Phi   float64 `json:"phi"`
}

// QueryEntity is an entity linked in a text: its QID, label and where it
// was mentioned (byte offsets into the text).
type QueryEntity struct {
	QID     string `json:"qid"`
	Label   string `json:"label"`
	Surface string `json:"surface"`
	Start   int    `json:"start"`
	End     int    `json:"end"`
	// Confidence is set by the context linker only (linking=context).
	Confidence float64 `json:"confidence,omitempty"`
}

// Fallback says that a degradation or fallback fired, and why.
type Fallback struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Statement is a graph query that shows part of a retrieval in Neo4j
// Browser: the anchors' subgraphs (neo4j) or the results' named paths
// (neo4j_paths).
type Statement struct {
	Cypher string         `json:"cypher"`
	Params map[string]any `json:"params"`
}

// Subgraph is the ego graph of one entity; the body of
// GET /v1/entities/{qid}/subgraph.
type Subgraph struct {
	Root      string `json:"root"`
	Nodes     []Node `json:"nodes"`
	Edges     []Edge `json:"edges"`
	Truncated bool   `json:"truncated,omitempty"` // the node cap dropped reachable nodes
}

// SubgraphResponse is the body of GET /v1/entities/{qid}/subgraph.
type SubgraphResponse = Subgraph

// Node is a subgraph node.
type Node struct {
	QID   string `json:"qid"`
	Label string `json:"label"`
	Hop   int    `json:"hop"`           // BFS distance from the root
	Hub   bool   `json:"hub,omitempty"` // degree above the hub cap: kept, not expanded
}

// Edge is a typed, directed edge of a subgraph.
type Edge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	PID   string `json:"pid"`
	Label string `json:"label,omitempty"`
}

// SubgraphParams are the query parameters of GET /v1/entities/{qid}/subgraph;
// zero leaves a parameter to the server's default.
type SubgraphParams struct {
	Hops      int // 1..3
	Limit     int // the node cap, 1..512
	HubDegree int
}

// LinkRequest is the body of POST /v1/link.
type LinkRequest struct {
	Text string `json:"text"`
}

// LinkResponse lists the entities linked in the text.
type LinkResponse struct {
	Mentions []QueryEntity `json:"mentions"`
}

// Health is the body of GET /healthz.
type Health struct {
	Status string `json:"status"` // "ok"
}

// Readiness is the body of GET /readyz: "ready" or "not ready", and each
// backend check's "ok" or error.
type Readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// Error codes: the code of an ErrorDetail, one per HTTP status.
const (
	CodeInvalid       = "invalid_argument"       // 400
	CodeUnauthorized  = "unauthorized"           // 401
	CodeForbidden     = "forbidden"              // 403: the Host is not answered (see AllowedHosts)
	CodeNotFound      = "not_found"              // 404
	CodeBadMethod     = "method_not_allowed"     // 405, with Allow
	CodeBadMediaType  = "unsupported_media_type" // 415: the body is not declared application/json
	CodeTooLarge      = "payload_too_large"      // 413
	CodeUnprocessable = "unprocessable"          // 422
	CodeRateLimited   = "rate_limited"           // 429
	CodeInternal      = "internal"               // 500
	CodeUnavailable   = "unavailable"            // 503
)

// ErrorBody is every error's body: {"error": {"code", "message", "field"}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail names what went wrong.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"` // the request field that was wrong, when there is one
}

// MaxBodyBytes bounds request bodies.
const MaxBodyBytes = 64 << 10

// MaxQueryChars bounds a query's (and a link text's) length in characters.
const MaxQueryChars = 2000
