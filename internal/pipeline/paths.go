package pipeline

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/pipeline/kgchan"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// Path explanations (docs/method.md, "Explanations that name the paths"):
// every result and anchor names the best few KG paths, one or two hops, from
// a query entity to one of its entities, each with its question relevance as
// the graph channel scores it (pathrel.Reach, same relation texts and
// prior). They are read from the subgraphs the request already holds, G_Q's
// and the channel's walk: naming them costs no graph call. Nothing here
// changes a score or a rank.

// maxNamedPaths is how many paths a document names: enough to show a second
// query entity or relation that also leads to it, few enough to read.
const maxNamedPaths = 3

// The kinds of query entity a named path starts from.
const (
	FromQueryEntity = "query_entity" // linked in Q; phi names it when it has a query subgraph
	FromTopDocument = "top_document" // the entity of a top stage-1 document (graph_roots)
)

// pathIndex is, for each query entity, its best path to every entity of the
// documents to explain, with the labels of the paths' nodes.
type pathIndex struct {
	roots  []string                           // in the order found: G_Q's roots first
	best   map[string]map[string]pathrel.Path // root -> entity -> best path
	kind   map[string]string                  // root -> FromQueryEntity | FromTopDocument
	labels map[string]string                  // QID -> label
}

// namePaths indexes the paths from the query entities to the entities of
// docs that the request holds: pathrel.Reach over each G_Q subgraph (its
// hops, at most 2), and the paths the graph channel already walked (each
// entity's best over the channel's roots). relvec is Q under the relation
// encoder; linked are Q's linked entities: any other root is a top stage-1
// document's entity. Explanations never fail a retrieval: if the relation
// texts cannot be encoded, the documents name no path and the response says
// why; only the context's errors are returned.
func (e explainer) namePaths(ctx context.Context, relvec *chanio.RelVector, ch kgchan.Output, qsubs []*entry, linked []QueryEntity, docs ...[]Doc) (pathIndex, error) {
	defer e.trace.timed("explain_paths", time.Now())
	targets := map[string]bool{}
	for _, ds := range docs {
		for _, d := range ds {
			targets[d.ID] = true
			for _, e := range d.Entities {
				targets[e] = true
			}
		}
	}
	ix := pathIndex{best: map[string]map[string]pathrel.Path{}, kind: map[string]string{}, labels: map[string]string{}}
	sgs, err := e.indexPaths(ctx, &ix, relvec, ch, qsubs, targets)
	if err != nil {
		if ctx.Err() != nil {
			return pathIndex{}, ctx.Err()
		}
		e.trace.fallback("path_explanations_unavailable", "the results name no KG path: "+err.Error())
		return pathIndex{}, nil
	}
	ix.labelNodes(ch, linked, sgs)
	return ix, nil
}

// indexPaths puts in ix the best path from each root to each of targets:
// G_Q's roots first, then the graph channel's. It returns the subgraphs
// the paths were read from, where their nodes' labels are.
func (e explainer) indexPaths(ctx context.Context, ix *pathIndex, relvec *chanio.RelVector, ch kgchan.Output, qsubs []*entry, targets map[string]bool) ([]kg.Subgraph, error) {
	var sgs []kg.Subgraph
	if len(qsubs) > 0 {
		prior, err := e.kg.StepPrior(ctx, relvec, e.trace)
		if err != nil {
			return nil, err
		}
		rv, err := ch.RelationVector(ctx, relvec)
		if err != nil {
			return nil, fmt.Errorf("encode the relation query: %w", err)
		}
		rels := e.kg.RelationTexts
		for _, q := range qsubs {
			root := q.sg.Root
			paths, err := rels.Reach(ctx, rv, pathrel.Mentioned(root), map[string]kg.Subgraph{root: q.sg}, min(e.Subgraph.Hops, 2), prior)
			if err != nil {
				return nil, err
			}
			for _, p := range paths {
				ix.offer(p, targets)
			}
			sgs = append(sgs, q.sg)
		}
	}
	for _, p := range ch.Reached {
		ix.offer(p, targets)
	}
	for _, q := range ch.Roots {
		sgs = append(sgs, ch.Subs[q.QID])
	}
	return sgs, nil
}

// offer keeps p when it ends at one of targets and beats the path its root
// holds to that entity.
func (ix *pathIndex) offer(p pathrel.Path, targets map[string]bool) {
	if !targets[p.Entity] {
		return
	}
	q := p.Root()
	m, ok := ix.best[q]
	if !ok {
		m = map[string]pathrel.Path{}
		ix.best[q] = m
		ix.roots = append(ix.roots, q)
	}
	if b, ok := m[p.Entity]; !ok || pathrel.Better(p, b) {
		m[p.Entity] = p
	}
}

// labelNodes sets the kind of every root (a query entity, or a top stage-1
// document's) and the labels of the paths' nodes, from the linked entities
// first, then from the subgraphs sgs.
func (ix *pathIndex) labelNodes(ch kgchan.Output, linked []QueryEntity, sgs []kg.Subgraph) {
	isLinked := map[string]bool{}
	for _, q := range ch.Roots {
		// with structure off, the channel links Q itself: its mentioned
		// roots are query entities that G_Q and phi lack
		isLinked[q.QID] = isLinked[q.QID] || q.Mentioned
	}
	for _, e := range linked {
		isLinked[e.QID] = true
		if e.Label != "" {
			ix.labels[e.QID] = e.Label
		}
	}
	need := map[string]bool{}
	for _, q := range ix.roots {
		ix.kind[q] = FromTopDocument
		if isLinked[q] {
			ix.kind[q] = FromQueryEntity
		}
		need[q] = true
		for _, p := range ix.best[q] {
			for _, st := range p.Steps {
				need[st.To] = true
			}
		}
	}
	for _, sg := range sgs {
		for _, n := range sg.Nodes {
			if _, ok := ix.labels[n.QID]; !ok && need[n.QID] && n.Label != "" {
				ix.labels[n.QID] = n.Label
			}
		}
	}
}

// forDoc is the best few paths from a query entity to one of d's entities,
// best first (ties: to d's own entity first); an empty list when none
// reaches it. d's own ID counts as its entity when it is a QID (the entity-page convention the graph channel
// uses), and the channel's path of a document it brought in is always
// named: it carried the document's graph score.
func (ix pathIndex) forDoc(d Doc) []NamedPath {
	ents := append([]string(nil), d.Entities...)
	if kg.ValidQID(d.ID) {
		ents = append(ents, d.ID)
	}
	var cands []pathrel.Path
	seen := map[[2]string]bool{}
	for _, q := range ix.roots {
		for _, e := range ents {
			p, ok := ix.best[q][e]
			if k := [2]string{q, e}; ok && !seen[k] {
				seen[k] = true
				cands = append(cands, p)
			}
		}
	}
	// Among equally relevant paths, the one to the document's own entity
	// reads first: it says why this page, not only what it mentions.
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if a.Relevance == b.Relevance && (a.Entity == d.ID) != (b.Entity == d.ID) {
			return a.Entity == d.ID
		}
		return pathrel.Better(a, b)
	})
	keep := cands[:min(len(cands), maxNamedPaths)]
	if g := d.Breakdown.Graph; g != nil && len(g.Steps) > 0 {
		carried := [2]string{g.Steps[0].From, d.ID}
		if g.Bridge != nil {
			carried[1] = g.Bridge.Entity
		}
		named := false
		for _, p := range keep {
			named = named || [2]string{p.Root(), p.Entity} == carried
		}
		if !named {
			for _, p := range cands[len(keep):] {
				if [2]string{p.Root(), p.Entity} == carried {
					keep = append(keep[:len(keep)-1:len(keep)-1], p)
					break
				}
			}
		}
	}
	out := make([]NamedPath, 0, len(keep))
	for _, p := range keep {
		out = append(out, ix.named(p))
	}
	return out
}

// named is p as a document names it, with labels.
func (ix pathIndex) named(p pathrel.Path) NamedPath {
	root := p.Root()
	text := ix.label(root)
	for _, st := range p.Steps {
		text += " -[" + pathrel.Text(st.Label, st.PID, st.Backward) + "]-> " + ix.label(st.To)
	}
	return NamedPath{From: root, FromLabel: ix.labels[root], FromKind: ix.kind[root], To: p.Entity, ToLabel: ix.labels[p.Entity],
		Path: p.String(), Text: text, Steps: p.Steps, Relevance: p.Relevance}
}

// label is q's label, or q when the subgraphs carry none.
func (ix pathIndex) label(q string) string {
	if l := ix.labels[q]; l != "" {
		return l
	}
	return q
}

// explainPaths sets breakdown.paths on every document of docs.
func (ix pathIndex) explainPaths(docs []Doc) {
	for i := range docs {
		docs[i].Breakdown.Paths = ix.forDoc(docs[i])
	}
}

// drawnPaths are the results' named paths as the graph stores their edges,
// each once, for the Browser statement (kg.Inspector.PathStatement).
func drawnPaths(results []Doc) []kg.Path {
	var out []kg.Path
	seen := map[string]bool{}
	for _, d := range results {
		for _, p := range d.Breakdown.Paths {
			if seen[p.Path] {
				continue
			}
			seen[p.Path] = true
			edges := make([]kg.Edge, len(p.Steps))
			for i, s := range p.Steps {
				edges[i] = kg.Edge{From: s.From, PID: s.PID, Label: s.Label, To: s.To}
				if s.Backward {
					edges[i].From, edges[i].To = s.To, s.From
				}
			}
			out = append(out, kg.Path{Name: fmt.Sprintf("result %d %s: %s (relevance %.3f)", d.Rank, d.ID, p.Text, p.Relevance), Edges: edges})
		}
	}
	return out
}
