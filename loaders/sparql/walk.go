package sparql

import (
	"context"
	"fmt"
	"strings"

	"github.com/knakk/rdf"

	"github.com/dmar-kg/dmar/internal/kg"
)

// neighbourhood is what the walk from the seeds found: the entities within
// o.Hops of a seed, and every statement read between entities.
type neighbourhood struct {
	in    map[string]bool
	edges []kg.Triple
	seen  map[kg.Triple]bool
}

// walk reads the statements of the frontier in both directions, hop by
// hop, then those out of the last level, which close the subgraph.
func (l *loader) walk() (*neighbourhood, error) {
	n := &neighbourhood{in: map[string]bool{}, seen: map[kg.Triple]bool{}}
	var frontier []string
	for _, q := range l.o.Seeds {
		if !n.in[q] {
			n.in[q] = true
			frontier = append(frontier, q)
		}
	}
	for h := 1; h <= l.o.Hops && len(frontier) > 0; h++ {
		next := map[string]bool{}
		grow := func(q string) {
			if !n.in[q] {
				next[q] = true
			}
		}
		if err := l.query("out-edges", frontier, func(s map[string]rdf.Term) {
			if e, ok := n.add(s, l.st); ok {
				grow(e.Tail)
			}
		}); err != nil {
			return nil, err
		}
		if err := l.query("in-edges", frontier, func(s map[string]rdf.Term) {
			if e, ok := n.add(s, l.st); ok {
				grow(e.Head)
			}
		}); err != nil {
			return nil, err
		}
		frontier = sortedKeys(next)
		for _, q := range frontier {
			n.in[q] = true
		}
	}
	if err := l.query("out-edges", frontier, func(s map[string]rdf.Term) { n.add(s, l.st) }); err != nil {
		return nil, err
	}
	return n, nil
}

// add keeps the statement of row s, once; ok says it is new.
func (n *neighbourhood) add(s map[string]rdf.Term, st *Stats) (kg.Triple, bool) {
	h, ok1 := id(s["s"], entityNS, kg.ValidQID)
	p, ok2 := id(s["p"], directNS, kg.ValidPID)
	t, ok3 := id(s["o"], entityNS, kg.ValidQID)
	if !ok1 || !ok2 || !ok3 {
		st.bad("row %v is not item wdt:P item", s)
		return kg.Triple{}, false
	}
	e := kg.Triple{Head: h, PID: p, Tail: t}
	if n.seen[e] {
		st.Filtered++
		return e, false
	}
	n.seen[e] = true
	n.edges = append(n.edges, e)
	return e, true
}

// closed are the statements between entities of the neighbourhood, and
// their properties; the others are counted as filtered.
func (n *neighbourhood) closed(st *Stats) ([]kg.Triple, map[string]bool) {
	var triples []kg.Triple
	pids := map[string]bool{}
	for _, e := range n.edges {
		if n.in[e.Head] && n.in[e.Tail] {
			triples = append(triples, e)
			pids[e.PID] = true
			st.Loaded++
		} else {
			st.Filtered++
		}
	}
	return triples, pids
}

// described are the entities and properties with their labels,
// descriptions and aliases.
type described struct {
	ents map[string]*kg.Entity
	rels map[string]*kg.Relation
	pids []string // sorted
}

// describe reads the labels, descriptions and aliases of nodes and pids.
func (l *loader) describe(nodes []string, pids map[string]bool) (described, error) {
	d := described{ents: make(map[string]*kg.Entity, len(nodes)), rels: map[string]*kg.Relation{}, pids: sortedKeys(pids)}
	for _, q := range nodes {
		d.ents[q] = &kg.Entity{QID: q}
	}
	for p := range pids {
		d.rels[p] = &kg.Relation{PID: p}
	}
	ids := append(append([]string{}, nodes...), d.pids...)
	err := l.query("labels", ids, func(s map[string]rdf.Term) { d.row(s, l.st) })
	return d, err
}

// row keeps a label row's text: the first label and description of an
// entity or property, every distinct alias of an entity.
func (d described) row(s map[string]rdf.Term, st *Stats) {
	x, ok := id(s["s"], entityNS, func(v string) bool { return kg.ValidQID(v) || kg.ValidPID(v) })
	kind, text := term(s["kind"]), strings.TrimSpace(term(s["text"]))
	if !ok || text == "" {
		st.bad("row %v has no item/property or text", s)
		return
	}
	if r := d.rels[x]; r != nil {
		switch {
		case kind == "label" && r.Label == "":
			r.Label = text
		case kind == "description" && r.Description == "":
			r.Description = text
		default:
			st.Filtered++
			return
		}
		st.Loaded++
		return
	}
	e := d.ents[x]
	if e == nil {
		st.Filtered++
		return
	}
	switch {
	case kind == "label" && e.Label == "":
		e.Label = text
	case kind == "description" && e.Description == "":
		e.Description = text
	case kind == "alias" && !contains(e.Aliases, text):
		e.Aliases = append(e.Aliases, text)
	default:
		st.Filtered++
		return
	}
	st.Loaded++
}

// write writes the relations, the entities (an entity without a label is
// labelled by its QID; an alias equal to the label is dropped) and the
// triples to sink.
func (d described) write(ctx context.Context, sink kg.Sink, st *Stats, nodes []string, triples []kg.Triple) error {
	relList := make([]kg.Relation, 0, len(d.rels))
	for _, p := range d.pids {
		relList = append(relList, *d.rels[p])
	}
	if err := sink.WriteRelations(ctx, relList); err != nil {
		return fmt.Errorf("sparql: write relations: %w", err)
	}
	entList := make([]kg.Entity, 0, len(nodes))
	for _, q := range nodes {
		e := d.ents[q]
		if e.Label == "" {
			e.Label = q
		}
		n := len(e.Aliases)
		e.Aliases = dedupe(e.Label, e.Aliases)
		st.Loaded -= n - len(e.Aliases) // an alias equal to the label
		st.Filtered += n - len(e.Aliases)
		entList = append(entList, *e)
	}
	if err := sink.WriteEntities(ctx, entList); err != nil {
		return fmt.Errorf("sparql: write entities: %w", err)
	}
	if err := sink.WriteTriples(ctx, triples); err != nil {
		return fmt.Errorf("sparql: write triples: %w", err)
	}
	st.Entities, st.Triples, st.Relations = len(entList), len(triples), len(relList)
	return nil
}
