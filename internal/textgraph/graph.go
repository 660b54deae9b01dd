package textgraph

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// NodeKind is what a node of the text graph stands for.
type NodeKind uint8

const (
	// PassageNode is a corpus document.
	PassageNode NodeKind = iota
	// PhraseNode is a phrase that names no KG entity.
	PhraseNode
	// EntityNode is a KG entity a passage mentions (linked at load) or an
	// extracted phrase names.
	EntityNode
)

// EdgeKind is why two nodes are joined.
type EdgeKind uint8

const (
	// Contains joins a passage and a phrase or entity it holds.
	Contains EdgeKind = iota
	// Cooccur joins two phrases of one sentence (weight: the sentences).
	Cooccur
	// Related joins an extracted triple's subject and object.
	Related
	// Synonym joins two phrases whose embeddings are close (weight: the
	// cosine).
	Synonym
	// KGEdge joins two entities the knowledge graph relates.
	KGEdge
)

// String names the edge kind as explanations and Neo4j do.
func (k EdgeKind) String() string {
	return [...]string{"contains", "cooccurs", "related", "synonym", "kg"}[k]
}

// Node keys: a passage is "d:" + its document ID, a phrase "p:" + its Key,
// an entity "e:" + its QID.
const (
	passagePrefix = "d:"
	phrasePrefix  = "p:"
	entityPrefix  = "e:"
)

// PassageKey, PhraseKey and EntityKey are the node keys of a document, a
// phrase (its Key) and an entity.
func PassageKey(id string) string { return passagePrefix + id }
func PhraseKey(key string) string { return phrasePrefix + key }
func EntityKey(qid string) string { return entityPrefix + qid }

// KindOf is the kind of node a key names.
func KindOf(key string) NodeKind {
	switch {
	case strings.HasPrefix(key, passagePrefix):
		return PassageNode
	case strings.HasPrefix(key, entityPrefix):
		return EntityNode
	}
	return PhraseNode
}

// DocumentID is the document ID of a passage node's key.
func DocumentID(key string) string { return strings.TrimPrefix(key, passagePrefix) }

// Node is a node of a subgraph: its key, a label (a phrase as first
// written, an entity's label, a document's title) and its hop from the
// nearest seed.
type Node struct {
	Key   string   `json:"key"`
	Kind  NodeKind `json:"kind"`
	Label string   `json:"label"`
	Hop   int      `json:"hop"`
	// Degree is the node's number of edges in the whole graph; a node
	// above the hub cap is kept but not expanded.
	Degree int  `json:"degree"`
	Hub    bool `json:"hub,omitempty"`
}

// Edge is an undirected weighted edge of a subgraph, between the nodes at
// indexes A < B of its Nodes (or, for Synonym and KGEdge, from A to B as
// stored; the walk treats every edge as undirected).
type Edge struct {
	A, B int      `json:"-"`
	From string   `json:"from"`
	To   string   `json:"to"`
	Kind EdgeKind `json:"kind"`
	W    float64  `json:"w"`
}

// Subgraph is the neighbourhood of a set of seeds: its nodes sorted by
// (hop, key), and every edge of the graph with both ends among them and at
// least one end walked (a non-hub short of the last hop), sorted by (from,
// to, kind).
type Subgraph struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Params bound a neighbourhood: Hops from the seeds (1-4), and the hub cap,
// HubDegree: a node with more edges is kept, never expanded (a phrase
// half the corpus holds would otherwise pull in the whole corpus). A seed
// is expanded whatever its degree, so a question's own hub entity still
// reaches its passages.
type Params struct {
	Hops      int `json:"hops"`
	HubDegree int `json:"hub_degree"`
}

// Validate checks p.
func (p Params) Validate() error {
	if p.Hops < 1 || p.Hops > 4 {
		return fmt.Errorf("text graph hops must be between 1 and 4, got %d", p.Hops)
	}
	if p.HubDegree < 1 {
		return fmt.Errorf("text graph hub degree must be positive, got %d", p.HubDegree)
	}
	return nil
}

// Match is a node that matched the question, and how well.
type Match struct {
	Key   string  `json:"key"`
	Label string  `json:"label"`
	Score float64 `json:"score"` // 1 for an exact match, the cosine otherwise
	// Passages is how many passages hold the node (its specificity: a seed
	// is weighted by 1/Passages, as HippoRAG 2 weighs phrase seeds).
	Passages int `json:"passages"`
}

// Store is the port the text graph is read through.
//
// Methods honour ctx; a backend that is down returns an error whose chain
// holds an errs.Unavailable *errs.Error. Unknown keys are not errors.
type Store interface {
	// Match returns the phrase and entity nodes whose keys are among keys
	// (score 1), and the k whose vectors are closest to v with a cosine of
	// at least minCos (v nil: none), each node once, best first.
	Match(ctx context.Context, keys []string, v []float32, k int, minCos float64) ([]Match, error)
	// Neighbourhood is the subgraph around seeds (node keys; unknown ones
	// are ignored), in one round trip.
	Neighbourhood(ctx context.Context, seeds []string, p Params) (Subgraph, error)
}

// Stats count a graph's parts.
type Stats struct {
	Passages, Phrases, Entities int
	Edges                       map[string]int // by EdgeKind name
}

func (s Stats) String() string {
	kinds := make([]string, 0, len(s.Edges))
	for k := range s.Edges {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, s.Edges[k])
	}
	return fmt.Sprintf("%d passages, %d phrases, %d entities; edges: %s", s.Passages, s.Phrases, s.Entities, strings.Join(parts, ", "))
}
