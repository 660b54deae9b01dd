package neo4jkg

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/dmar-kg/dmar/cypher"
	"github.com/dmar-kg/dmar/internal/kg"
)

// MaxHops is the deepest BFS the subgraph statement unrolls.
const MaxHops = 3

// Entities implements kg.Graph.
func (s *Store) Entities(ctx context.Context, qids []string) (map[string]kg.Entity, error) {
	out := map[string]kg.Entity{}
	if len(qids) == 0 {
		return out, ctx.Err()
	}
	res, err := s.read(ctx, "entities", cypher.Entities, map[string]any{"qids": qids})
	if err != nil {
		return nil, err
	}
	for _, r := range res.Records {
		e := kg.Entity{
			QID:         str(r.Values[0]),
			Label:       str(r.Values[1]),
			Description: str(r.Values[2]),
			Aliases:     strs(r.Values[3]),
			Degree:      integer(r.Values[4]),
			LeadNames:   strs(r.Values[5]),
		}
		out[e.QID] = e
	}
	return out, nil
}

// Link implements kg.Graph: the forms of text (kg.Spans) are looked up in
// the full-text index entity_names in one round trip, and kg.Resolve picks
// the mentions, so links are those of every other backend.
func (s *Store) Link(ctx context.Context, text string) ([]kg.Mention, error) {
	toks, forms := kg.Spans(text)
	if len(forms) == 0 {
		return nil, ctx.Err()
	}
	want := make(map[string]bool, len(forms))
	for _, f := range forms {
		want[f] = true
	}
	res, err := s.read(ctx, "link", cypher.LinkCandidates, map[string]any{"queries": luceneQueries(forms)})
	if err != nil {
		return nil, err
	}
	cands := map[string][]kg.Candidate{}
	seen := map[[2]string]bool{}
	for _, r := range res.Records {
		qid, label, deg := str(r.Values[0]), str(r.Values[1]), integer(r.Values[3])
		labelForm := kg.NormalizeForm(label)
		for _, f := range strs(r.Values[2]) {
			if !want[f] || seen[[2]string{f, qid}] {
				continue
			}
			seen[[2]string{f, qid}] = true
			// The label's form makes a label match (kg.NewDictionary's rule).
			cands[f] = append(cands[f], kg.Candidate{QID: qid, IsLabel: f == labelForm, Degree: deg})
		}
	}
	return kg.Resolve(text, toks, cands), nil
}

// maxClauses keeps each Lucene query under its default limit of 1024 clauses.
const maxClauses = 512

// luceneQueries ORs quoted forms, maxClauses per query. Forms hold only
// letters, digits, marks and single spaces (kg.NormalizeForm), none of which
// is special inside Lucene quotes.
func luceneQueries(forms []string) []string {
	var out []string
	for i := 0; i < len(forms); i += maxClauses {
		var b strings.Builder
		for j, f := range forms[i:min(i+maxClauses, len(forms))] {
			if j > 0 {
				b.WriteString(" OR ")
			}
			b.WriteByte('"')
			b.WriteString(f)
			b.WriteByte('"')
		}
		out = append(out, b.String())
	}
	return out
}

func checkParams(p kg.SubgraphParams) error {
	if p.Hops < 0 || p.Hops > MaxHops {
		return fmt.Errorf("neo4jkg: hops %d outside 0..%d", p.Hops, MaxHops)
	}
	return nil
}

// uncapped reads kg.SubgraphParams' zero caps as no cap, as memkg does.
func uncapped(p kg.SubgraphParams) kg.SubgraphParams {
	if p.MaxNodes <= 0 {
		p.MaxNodes = math.MaxInt32
	}
	if p.HubDegree <= 0 {
		p.HubDegree = math.MaxInt32
	}
	return p
}

func subgraphParams(roots []string, p kg.SubgraphParams) map[string]any {
	p = uncapped(p)
	return map[string]any{"roots": roots, "hops": p.Hops, "maxNodes": p.MaxNodes, "hubDegree": p.HubDegree}
}

var (
	_ kg.NeighbourhoodReader       = (*Store)(nil)
	_ kg.NeighbourhoodDegreeReader = (*Store)(nil)
)

// Subgraphs implements kg.Graph with one statement for all roots.
func (s *Store) Subgraphs(ctx context.Context, roots []string, p kg.SubgraphParams) (map[string]kg.Subgraph, error) {
	out, _, err := s.subgraphs(ctx, "subgraphs", roots, p, false, nil)
	return out, err
}

// Neighbourhoods implements kg.NeighbourhoodReader with the same statement
// for all roots, a hub root's star included: one round trip.
func (s *Store) Neighbourhoods(ctx context.Context, roots []string, p kg.SubgraphParams) (map[string]kg.Subgraph, error) {
	out, _, err := s.subgraphs(ctx, "neighbourhoods", roots, p, true, nil)
	return out, err
}

// NeighbourhoodDegrees implements kg.NeighbourhoodDegreeReader: the
// neighbourhoods' statement returns every node's degree (it reads them
// for the hub rule), which Neighbourhoods drops.
func (s *Store) NeighbourhoodDegrees(ctx context.Context, roots []string, p kg.SubgraphParams) (map[string]kg.Subgraph, map[string]int, error) {
	return s.subgraphs(ctx, "neighbourhoods", roots, p, true, map[string]int{})
}

// subgraphs runs subgraphs.cypher; star expands hub roots one level. When
// degrees is not nil it collects every node's degree into it.
func (s *Store) subgraphs(ctx context.Context, op string, roots []string, p kg.SubgraphParams, star bool, degrees map[string]int) (map[string]kg.Subgraph, map[string]int, error) {
	if err := checkParams(p); err != nil {
		return nil, nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	out := map[string]kg.Subgraph{}
	uniq := dedupe(roots)
	if len(uniq) == 0 {
		return out, degrees, nil
	}
	params := subgraphParams(uniq, p)
	params["star"] = star
	res, err := s.read(ctx, op, cypher.Subgraphs, params)
	if err != nil {
		return nil, nil, err
	}
	p = uncapped(p)
	for _, r := range res.Records {
		sg := kg.Subgraph{Root: str(r.Values[0]), Truncated: r.Values[2] == true}
		qidOf := map[string]string{} // element id -> QID: edges name their ends by element id
		for hop, lv := range list(r.Values[1]) {
			level := make([]kg.Node, 0, len(list(lv)))
			for _, n := range list(lv) {
				f := list(n)
				level = append(level, kg.Node{QID: str(f[0]), Label: str(f[1]), Hop: hop, Hub: integer(f[2]) > p.HubDegree})
				qidOf[str(f[3])] = str(f[0])
				if degrees != nil {
					degrees[str(f[0])] = integer(f[2])
				}
			}
			sort.Slice(level, func(i, j int) bool { return level[i].QID < level[j].QID })
			sg.Nodes = append(sg.Nodes, level...)
		}
		for _, e := range list(r.Values[3]) {
			f := list(e)
			sg.Edges = append(sg.Edges, kg.Edge{From: qidOf[str(f[0])], PID: str(f[1]), To: qidOf[str(f[2])], Label: str(f[3])})
		}
		kg.SortEdges(sg.Edges)
		out[sg.Root] = sg
	}
	return out, degrees, nil
}

// SubgraphStatement implements kg.Inspector: browse_subgraphs.cypher with its
// parameters, which draws in Neo4j Browser the nodes and relationships of
// exactly the subgraphs Subgraphs returns.
func (s *Store) SubgraphStatement(roots []string, p kg.SubgraphParams) (string, map[string]any) {
	return s.q.Get(cypher.BrowseSubgraphs), subgraphParams(dedupe(roots), p)
}

// PathStatement implements kg.Inspector: draw_paths.cypher with its
// parameters, which draws in Neo4j Browser the nodes and relationships of
// exactly paths, and returns each path's name with them.
func (s *Store) PathStatement(paths []kg.Path) (string, map[string]any) {
	rows := make([]map[string]any, 0, len(paths))
	for _, p := range paths {
		edges := make([]map[string]any, len(p.Edges))
		for i, e := range p.Edges {
			edges[i] = map[string]any{"from": e.From, "pid": e.PID, "to": e.To}
		}
		rows = append(rows, map[string]any{"name": p.Name, "edges": edges})
	}
	return s.q.Get(cypher.DrawPaths), map[string]any{"paths": rows}
}

// RecordRetrieval implements kg.Recorder.
func (s *Store) RecordRetrieval(ctx context.Context, r kg.RetrievalRecord) error {
	if r.ID == "" {
		return fmt.Errorf("neo4jkg: record retrieval: empty id")
	}
	anchors := make([]map[string]any, len(r.Anchors))
	for i, a := range r.Anchors {
		anchors[i] = map[string]any{"docId": a.DocID, "title": a.Title, "rank": a.Rank, "score": a.Score, "entities": nonNil(a.Entities)}
	}
	_, err := s.write(ctx, "record retrieval", cypher.RecordRetrieval, map[string]any{
		"id": r.ID, "query": r.Query, "reformulated": r.Reformulated, "at": r.At, "anchors": anchors,
	}, false)
	return err
}

func dedupe(qs []string) []string {
	seen := make(map[string]bool, len(qs))
	out := make([]string, 0, len(qs))
	for _, q := range qs {
		if !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Conversions of Bolt values; a missing property arrives as nil.

func str(v any) string {
	s, _ := v.(string)
	return s
}

func integer(v any) int {
	n, _ := v.(int64)
	return int(n)
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// strs converts a list of strings; empty or missing gives nil, as bundle.Read.
func strs(v any) []string { return convert(list(v), str) }

// convert is f of each of xs; nil when xs is empty.
func convert[T, U any](xs []T, f func(T) U) []U {
	if len(xs) == 0 {
		return nil
	}
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}
