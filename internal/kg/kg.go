// Package kg is the knowledge-graph domain of dmar: entities, typed edges, ego
// subgraphs, and the Graph port that every graph backend implements (memkg in
// process, neo4jkg on Neo4j). It imports no backend.
package kg

import (
	"context"
	"strings"
)

// Entity is a Wikidata item.
type Entity struct {
	QID         string   `json:"qid"`
	Label       string   `json:"label"`
	Aliases     []string `json:"aliases,omitempty"`
	Description string   `json:"description,omitempty"`
	// LeadNames are other names the entity's own document gives it in its
	// lead ("known professionally as Antonio Banderas"; LeadNames): derived
	// forms for the context linker, never exact ones.
	LeadNames []string `json:"lead_names,omitempty"`
	// Degree counts the item-to-item statements touching the entity (in + out) in
	// the loaded graph. It decides whether the entity is a hub.
	Degree int `json:"degree"`
}

// Relation is a Wikidata property used as an edge type.
type Relation struct {
	PID         string `json:"pid"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Triple is one statement whose object is an item.
type Triple struct {
	Head, PID, Tail string
}

// Edge is a typed, directed edge of a subgraph.
type Edge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	PID   string `json:"pid"`
	Label string `json:"label,omitempty"` // the property's label, when known
}

// Node is a subgraph node.
type Node struct {
	QID   string `json:"qid"`
	Label string `json:"label"`
	Hop   int    `json:"hop"`           // BFS distance from the root
	Hub   bool   `json:"hub,omitempty"` // degree above the hub cap: kept, not expanded
}

// Subgraph is the ego graph g(e) of one entity. See SubgraphParams for the
// exact, backend-independent definition.
type Subgraph struct {
	Root      string `json:"root"`
	Nodes     []Node `json:"nodes"`
	Edges     []Edge `json:"edges"`
	Truncated bool   `json:"truncated,omitempty"` // the node cap dropped reachable nodes
}

// NodeSet returns the QIDs of the subgraph's nodes.
func (g Subgraph) NodeSet() map[string]struct{} {
	s := make(map[string]struct{}, len(g.Nodes))
	for _, n := range g.Nodes {
		s[n.QID] = struct{}{}
	}
	return s
}

// SubgraphParams fixes how ego subgraphs are extracted. Every backend must
// produce identical subgraphs for identical parameters:
//
//   - BFS from the root over edges in either direction, level by level, up to
//     Hops levels. Level 0 is the root.
//   - A node whose degree exceeds HubDegree is a hub: it is kept but never
//     expanded (the root included; real Wikidata hubs have millions of edges).
//   - The candidates of a level are the unvisited neighbours of the expanded
//     nodes of the previous level, sorted by QID (byte order), de-duplicated,
//     appended in that order until MaxNodes nodes are held (Truncated is then
//     set if any candidate was left out).
//   - Nodes are listed in BFS order (hop, then QID).
//   - Edges are every KG edge whose two ends are both nodes of the subgraph and
//     at least one end is not a hub, sorted by (From, PID, To), each once.
//   - MaxNodes <= 0 caps nothing, nor does HubDegree <= 0 (no node is a hub).
type SubgraphParams struct {
	Hops      int `json:"hops"`
	MaxNodes  int `json:"max_nodes"`
	HubDegree int `json:"hub_degree"`
}

// DefaultSubgraphParams are the method's defaults (h=1, N_max=64; see
// docs/method.md) with a hub cap of 500, the degree above which the kgqa
// benchmark calls an answer a hub.
func DefaultSubgraphParams() SubgraphParams {
	return SubgraphParams{Hops: 1, MaxNodes: 64, HubDegree: 500}
}

// Mention is a span of text linked to one entity.
type Mention struct {
	QID     string `json:"qid"`
	Surface string `json:"surface"` // the text as written
	Start   int    `json:"start"`   // byte offsets into the linked text
	End     int    `json:"end"`
	// Confidence is the context linker's (ResolveConfident); 0, and absent
	// from JSON, for exact linking.
	Confidence float64 `json:"confidence,omitempty"`
}

// Graph is the port the pipeline reads the knowledge graph through.
//
// Methods honour ctx: once it is done they return its error (ctx.Err(),
// possibly wrapped). A backend that cannot answer because it is down or
// overloaded returns an error whose chain holds an *errs.Error with code
// errs.Unavailable (errs.Unavail: the API answers 503 with Retry-After); other
// failures are plain wrapped errors. Unknown QIDs and roots are not errors.
// The pipeline degrades on any error from Link or Subgraphs that is not the
// context's own (the structural path is turned off and the response says so).
type Graph interface {
	// Entities returns the known entities among qids, keyed by QID; unknown
	// QIDs are simply absent.
	Entities(ctx context.Context, qids []string) (map[string]Entity, error)
	// Link finds entity mentions in text by the rules of Spans and Resolve
	// (labels and aliases matched on NormalizeForm, Linkable forms only,
	// longest match first, then leftmost, no overlaps, ties broken by label
	// over alias, higher degree, then QID); mentions come in text order.
	Link(ctx context.Context, text string) ([]Mention, error)
	// Subgraphs extracts the ego subgraphs of all roots in one call; roots
	// unknown to the graph are absent from the result.
	Subgraphs(ctx context.Context, roots []string, p SubgraphParams) (map[string]Subgraph, error)
}

// Pinger is implemented by backends that can report their health.
type Pinger interface {
	Ping(ctx context.Context) error
}

// CleanAliases is the aliases of an entity labelled label, from lists in
// order of preference: trimmed, empties, the label and exact duplicates
// dropped, first occurrence kept. Every loader cleans aliases this way.
func CleanAliases(label string, lists ...[]string) []string {
	var out []string
	seen := map[string]bool{label: true}
	for _, as := range lists {
		for _, a := range as {
			a = strings.TrimSpace(a)
			if a == "" || seen[a] {
				continue
			}
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}
