package neo4jkg

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/dmar-kg/dmar/cypher"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/textgraph"
)

var _ textgraph.Writable = TextGraph{}

// The text graph's live writes, the document store's PUT and DELETE, with
// what the embedded graph does (textgraph.Memory) as their reference: a
// passage node keeps its part (tparts: the pairs it contributed, as JSON),
// so that a new version or a delete takes exactly those back; an edge's
// weight is the sum of what its passages contributed; new nodes carry their
// words (twords), which their synonym candidates share with them. One write
// is one transaction, so that a crash leaves the graph before or after it.

// Put implements textgraph.Writable: docs' passages added or replaced.
func (t TextGraph) Put(ctx context.Context, b textgraph.Builder, docs []retrieval.Document) error {
	p, err := b.Prepare(ctx, docs, t.known)
	if err != nil {
		return err
	}
	ids := make([]string, len(p.Parts))
	for i, pp := range p.Parts {
		ids[i] = pp.ID
	}
	return t.inWrite(ctx, "write passages to the text graph", func(tx neo4j.ManagedTransaction) error {
		if err := t.takeBack(ctx, tx, ids); err != nil {
			return err
		}
		nodes := make([]map[string]any, 0, len(p.Fresh)+len(p.Parts))
		for _, f := range p.Fresh {
			nodes = append(nodes, map[string]any{"key": f.Key, "label": f.Label, "vector": floats(f.Vector), "words": nonNil(f.Words)})
		}
		for _, pp := range p.Parts {
			nodes = append(nodes, map[string]any{"key": textgraph.PassageKey(pp.ID), "label": pp.Title, "vector": nil, "words": nil})
		}
		if err := t.run(ctx, tx, cypher.TextMergeNodes, map[string]any{"nodes": nodes}); err != nil {
			return err
		}
		var pairs []map[string]any
		for _, pp := range p.Parts {
			for _, q := range pp.Pairs {
				pairs = append(pairs, map[string]any{"from": q.A, "to": q.B, "kind": int64(q.Kind), "w": q.W})
			}
		}
		if err := t.run(ctx, tx, cypher.TextAddPairs, map[string]any{"pairs": nonNilRows(pairs)}); err != nil {
			return err
		}
		rows, err := partRows(p.Parts)
		if err != nil {
			return err
		}
		if err := t.run(ctx, tx, cypher.TextSetParts, map[string]any{"parts": rows}); err != nil {
			return err
		}
		var joins []map[string]any
		for _, e := range p.KGEdges {
			a, c := e[0], e[1]
			if c < a {
				a, c = c, a
			}
			joins = append(joins, map[string]any{"from": a, "to": c, "kind": int64(textgraph.KGEdge), "w": 1.0})
		}
		if err := t.run(ctx, tx, cypher.TextJoin, map[string]any{"edges": nonNilRows(joins)}); err != nil {
			return err
		}
		syn, err := t.synonyms(ctx, tx, p.Fresh, b)
		if err != nil {
			return err
		}
		return t.run(ctx, tx, cypher.TextJoin, map[string]any{"edges": nonNilRows(syn)})
	})
}

// Delete implements textgraph.Writable: the passages' contributions taken
// back (their nodes stay, as the embedded graph keeps them).
func (t TextGraph) Delete(ctx context.Context, ids []string) error {
	return t.inWrite(ctx, "delete passages from the text graph", func(tx neo4j.ManagedTransaction) error {
		return t.takeBack(ctx, tx, ids)
	})
}

// known reports which of keys are nodes.
func (t TextGraph) known(ctx context.Context, keys []string) (map[string]bool, error) {
	res, err := t.s.read(ctx, "read text graph nodes", cypher.TextKnown, map[string]any{"keys": nonNil(keys)})
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, r := range res.Records {
		k, _ := r.Get("key")
		if s, ok := k.(string); ok {
			have[s] = true
		}
	}
	return have, nil
}

// takeBack subtracts what the passages contributed and clears their parts.
func (t TextGraph) takeBack(ctx context.Context, tx neo4j.ManagedTransaction, ids []string) error {
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = textgraph.PassageKey(id)
	}
	res, err := tx.Run(ctx, t.s.q.Get(cypher.TextParts), map[string]any{"keys": nonNil(keys)})
	if err != nil {
		return t.s.wrap(ctx, "read passages' parts", err)
	}
	recs, err := res.Collect(ctx)
	if err != nil {
		return t.s.wrap(ctx, "read passages' parts", err)
	}
	var pairs []map[string]any
	var cleared []map[string]any
	for _, r := range recs {
		key, _ := r.Get("key")
		raw, _ := r.Get("parts")
		s, _ := raw.(string)
		var ps []textgraph.Pair
		if err := json.Unmarshal([]byte(s), &ps); err != nil {
			return fmt.Errorf("text graph: the part of %v is corrupt: %w", key, err)
		}
		for _, q := range ps {
			pairs = append(pairs, map[string]any{"from": q.A, "to": q.B, "kind": int64(q.Kind), "w": -q.W})
		}
		cleared = append(cleared, map[string]any{"key": key, "parts": nil})
	}
	if err := t.run(ctx, tx, cypher.TextAddPairs, map[string]any{"pairs": nonNilRows(pairs)}); err != nil {
		return err
	}
	return t.run(ctx, tx, cypher.TextSetParts, map[string]any{"parts": nonNilRows(cleared)})
}

// synonyms are the edges joining each new node to its synonyms among the
// nodes sharing a word with it, chosen as the embedded graph chooses them
// (textgraph.BestSynonyms), after the new nodes are written.
func (t TextGraph) synonyms(ctx context.Context, tx neo4j.ManagedTransaction, fresh []textgraph.Fresh, b textgraph.Builder) ([]map[string]any, error) {
	var words []string
	seen := map[string]bool{}
	for _, f := range fresh {
		if f.Vector == nil {
			continue
		}
		for _, w := range f.Words {
			if !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
	}
	if len(words) == 0 {
		return nil, nil
	}
	res, err := tx.Run(ctx, t.s.q.Get(cypher.TextWordNodes), map[string]any{"words": words, "cap": int64(textgraph.SynonymWordCap)})
	if err != nil {
		return nil, t.s.wrap(ctx, "read synonym candidates", err)
	}
	recs, err := res.Collect(ctx)
	if err != nil {
		return nil, t.s.wrap(ctx, "read synonym candidates", err)
	}
	byWord := map[string][]textgraph.Candidate{}
	for _, r := range recs {
		w, _ := r.Get("word")
		ns, _ := r.Get("nodes")
		for _, x := range asList(ns) {
			row, _ := x.(map[string]any)
			key, _ := row["key"].(string)
			byWord[w.(string)] = append(byWord[w.(string)], textgraph.Candidate{Key: key, Vector: float32s(row["vector"])})
		}
	}
	var out []map[string]any
	for _, f := range fresh {
		if f.Vector == nil {
			continue
		}
		var cands []textgraph.Candidate
		in := map[string]bool{}
		for _, w := range f.Words {
			for _, c := range byWord[w] {
				if c.Key != f.Key && !in[c.Key] {
					in[c.Key] = true
					cands = append(cands, c)
				}
			}
		}
		for _, c := range textgraph.BestSynonyms(f.Vector, cands, b.SynonymMinimum(), b.SynonymCount()) {
			a, z := f.Key, c.Key
			if z < a {
				a, z = z, a
			}
			out = append(out, map[string]any{"from": a, "to": z, "kind": int64(textgraph.Synonym), "w": c.Cos})
		}
	}
	return out, nil
}

// inWrite runs f in one write transaction.
func (t TextGraph) inWrite(ctx context.Context, op string, f func(tx neo4j.ManagedTransaction) error) error {
	sess := t.s.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: t.s.db, AccessMode: neo4j.AccessModeWrite})
	defer sess.Close(context.Background())
	_, err := sess.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) { return nil, f(tx) })
	if err != nil {
		return t.s.wrap(ctx, op, err)
	}
	return nil
}

// run runs a named statement in tx and consumes its result.
func (t TextGraph) run(ctx context.Context, tx neo4j.ManagedTransaction, name string, params map[string]any) error {
	t.s.statements.Add(1)
	res, err := tx.Run(ctx, t.s.q.Get(name), params)
	if err == nil {
		_, err = res.Consume(ctx)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// partRows are the passages' parts as rows of text_set_parts.
func partRows(parts []textgraph.Part) ([]map[string]any, error) {
	rows := make([]map[string]any, 0, len(parts))
	for _, pp := range parts {
		b, err := json.Marshal(pp.Pairs)
		if err != nil {
			return nil, err
		}
		rows = append(rows, map[string]any{"key": textgraph.PassageKey(pp.ID), "parts": string(b)})
	}
	return rows, nil
}

// floats is a vector as Cypher takes it (nil for none).
func floats(v []float32) any {
	if len(v) == 0 {
		return nil
	}
	return convert(v, func(x float32) float64 { return float64(x) })
}

func float32s(v any) []float32 {
	xs := asList(v)
	out := make([]float32, len(xs))
	for i, x := range xs {
		f, _ := x.(float64)
		out[i] = float32(f)
	}
	return out
}

func nonNilRows(rows []map[string]any) []map[string]any {
	if rows == nil {
		return []map[string]any{}
	}
	return rows
}
