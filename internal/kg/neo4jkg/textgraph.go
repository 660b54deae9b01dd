package neo4jkg

import (
	"context"
	"fmt"
	"sort"

	"github.com/dmar-kg/dmar/cypher"
	"github.com/dmar-kg/dmar/internal/textgraph"
)

var _ textgraph.Store = TextGraph{}

// TextGraph is the text graph on Neo4j (textgraph.Store):
//
//	(:TextNode {tkey, tlabel, tpassages, tvec})-[:TG {kind, w}]->(:TextNode)
//	(:TextNode)-[:TEXT_OF]->(:Document | :Entity)   a passage's or entity's node
//
// written whole from the graph dmar builds in memory at load (Replace),
// kept exact under the document store's writes (Put, Delete: textlive.go),
// and read in one round trip per call; the walk itself runs in Go, since
// Neo4j Community has no graph-algorithms library.
type TextGraph struct{ s *Store }

// TextGraph is the store's text graph.
func (s *Store) TextGraph() TextGraph { return TextGraph{s} }

// Replace makes the stored text graph exactly m's: the old one is deleted,
// then m's nodes and edges are written, 1,000 a transaction.
func (t TextGraph) Replace(ctx context.Context, m *textgraph.Memory) error {
	if err := t.s.autocommit(ctx, "delete the text graph", cypher.DeleteTextGraph, nil); err != nil {
		return err
	}
	nodes, edges := m.Export()
	if err := inBatches(ctx, len(nodes), func(lo, hi int) error {
		rows := make([]map[string]any, 0, hi-lo)
		for _, n := range nodes[lo:hi] {
			vec := floats(n.Vector)
			var words any
			if vec != nil {
				words = nonNil(textgraph.NodeWords(n.Key, n.Label))
			}
			rows = append(rows, map[string]any{"key": n.Key, "label": n.Label, "passages": int64(n.Passages), "vector": vec, "words": words})
		}
		_, err := t.s.write(ctx, "write text graph nodes", cypher.PutTextNodes, map[string]any{"nodes": rows}, false)
		return err
	}); err != nil {
		return err
	}
	if err := inBatches(ctx, len(edges), func(lo, hi int) error {
		rows := make([]map[string]any, 0, hi-lo)
		for _, e := range edges[lo:hi] {
			rows = append(rows, map[string]any{"from": e.From, "to": e.To, "kind": int64(e.Kind), "w": e.W})
		}
		_, err := t.s.write(ctx, "write text graph edges", cypher.PutTextEdges, map[string]any{"edges": rows}, false)
		return err
	}); err != nil {
		return err
	}
	parts := m.Parts()
	return inBatches(ctx, len(parts), func(lo, hi int) error {
		rows, err := partRows(parts[lo:hi])
		if err != nil {
			return err
		}
		_, err = t.s.write(ctx, "write text graph passages' parts", cypher.TextSetParts, map[string]any{"parts": rows}, false)
		return err
	})
}

// Match implements textgraph.Store in one round trip.
func (t TextGraph) Match(ctx context.Context, keys []string, v []float32, k int, minCos float64) ([]textgraph.Match, error) {
	var vec any
	if k > 0 {
		vec = floats(v)
	}
	res, err := t.s.read(ctx, "match the question in the text graph", cypher.TextMatch,
		map[string]any{"keys": nonNil(keys), "vector": vec, "k": int64(k), "min": minCos})
	if err != nil {
		return nil, err
	}
	out := []textgraph.Match{}
	if len(res.Records) == 0 {
		return out, nil
	}
	r := res.Records[0]
	exact, _ := r.Get("exact")
	near, _ := r.Get("near")
	// exact in the order of keys, as the embedded store lists them
	byKey := map[string]textgraph.Match{}
	for _, x := range asList(exact) {
		m := toMatch(x)
		byKey[m.Key] = m
	}
	seen := map[string]bool{}
	for _, key := range keys {
		if m, ok := byKey[key]; ok && !seen[key] {
			seen[key] = true
			out = append(out, m)
		}
	}
	for _, x := range asList(near) {
		out = append(out, toMatch(x))
	}
	return out, nil
}

func toMatch(x any) textgraph.Match {
	row, _ := x.(map[string]any)
	key, _ := row["key"].(string)
	label, _ := row["label"].(string)
	score, _ := row["score"].(float64)
	return textgraph.Match{Key: key, Label: label, Score: score, Passages: int(asInt(row["passages"]))}
}

// Neighbourhood implements textgraph.Store in one round trip.
func (t TextGraph) Neighbourhood(ctx context.Context, seeds []string, p textgraph.Params) (textgraph.Subgraph, error) {
	if err := p.Validate(); err != nil {
		return textgraph.Subgraph{}, err
	}
	res, err := t.s.read(ctx, "the text graph's neighbourhood", cypher.TextNeighbourhood,
		map[string]any{"seeds": nonNil(seeds), "hops": int64(p.Hops), "hub": int64(p.HubDegree)})
	if err != nil {
		return textgraph.Subgraph{}, err
	}
	sg := textgraph.Subgraph{Nodes: []textgraph.Node{}}
	if len(res.Records) == 0 {
		return sg, nil
	}
	r := res.Records[0]
	nv, _ := r.Get("nodes")
	for _, x := range asList(nv) {
		row, _ := x.(map[string]any)
		key, _ := row["key"].(string)
		label, _ := row["label"].(string)
		deg := int(asInt(row["deg"]))
		sg.Nodes = append(sg.Nodes, textgraph.Node{Key: key, Kind: textgraph.KindOf(key), Label: label, Hop: int(asInt(row["hop"])), Degree: deg, Hub: deg > p.HubDegree})
	}
	sort.Slice(sg.Nodes, func(i, j int) bool {
		if sg.Nodes[i].Hop != sg.Nodes[j].Hop {
			return sg.Nodes[i].Hop < sg.Nodes[j].Hop
		}
		return sg.Nodes[i].Key < sg.Nodes[j].Key
	})
	at := make(map[string]int, len(sg.Nodes))
	for i, n := range sg.Nodes {
		at[n.Key] = i
	}
	ev, _ := r.Get("edges")
	for _, x := range asList(ev) {
		row, _ := x.(map[string]any)
		from, _ := row["from"].(string)
		to, _ := row["to"].(string)
		w, _ := row["w"].(float64)
		a, okA := at[from]
		b, okB := at[to]
		if !okA || !okB {
			return textgraph.Subgraph{}, fmt.Errorf("neo4jkg: the text graph's neighbourhood holds an edge %s - %s whose end it does not list", from, to)
		}
		sg.Edges = append(sg.Edges, textgraph.Edge{A: a, B: b, From: from, To: to, Kind: textgraph.EdgeKind(asInt(row["kind"])), W: w})
	}
	textgraph.SortEdges(sg.Edges)
	return sg, nil
}
