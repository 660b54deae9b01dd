package pipeline_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
	"github.com/dmar-kg/dmar/internal/vec"
)

const director = "Who is the director of Inception?"

// Inception (Q25188) -[director, P57]-> Christopher Edward Nolan (Q25191).
const inception, nolanQID = "Q25188", "Q25191"

// drawingGraph is the embedded graph as a kg.Inspector, keeping the paths it
// was asked to draw.
type drawingGraph struct {
	*memkg.Graph
	drawn *[]kg.Path
}

func (g drawingGraph) SubgraphStatement(roots []string, _ kg.SubgraphParams) (string, map[string]any) {
	return "subgraphs", map[string]any{"roots": roots}
}

func (g drawingGraph) PathStatement(paths []kg.Path) (string, map[string]any) {
	*g.drawn = append(*g.drawn, paths...)
	return "paths", map[string]any{"n": len(paths)}
}

// edgeSet is every edge of the graph around qids, as stored.
func edgeSet(t *testing.T, g kg.Graph, qids []string) map[kg.Edge]bool {
	t.Helper()
	subs, err := g.Subgraphs(context.Background(), qids, kg.SubgraphParams{Hops: 1, MaxNodes: 4000, HubDegree: 100_000_000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[kg.Edge]bool{}
	for _, sg := range subs {
		for _, e := range sg.Edges {
			out[kg.Edge{From: e.From, PID: e.PID, To: e.To}] = true
		}
	}
	return out
}

// checkNamed holds every document's named paths to what they claim: at most
// three, best first (ties: the document's own entity first), each a chain of real KG edges from a query entity to one
// of the document's entities, with pathrel's relevance; and a document the
// graph channel brought in names the channel's path.
func checkNamed(t *testing.T, g kg.Graph, qvec []float32, roots map[string]string, docs []pipeline.Doc) {
	t.Helper()
	for _, d := range docs {
		ps := d.Breakdown.Paths
		if ps == nil || len(ps) > 3 {
			t.Fatalf("%s: paths %v, want a list of at most 3", d.ID, ps)
		}
		ents := map[string]bool{d.ID: true}
		for _, e := range d.Entities {
			ents[e] = true
		}
		for i, p := range ps {
			if i > 0 && p.Relevance > ps[i-1].Relevance {
				t.Errorf("%s: paths not best first: %v", d.ID, ps)
			}
			if p.To == d.ID && p.Relevance == ps[0].Relevance && ps[0].To != d.ID {
				t.Errorf("%s: a path as relevant to the document's own entity is not first: %v", d.ID, ps)
			}
			if kind, ok := roots[p.From]; !ok || kind != p.FromKind {
				t.Errorf("%s: path %q starts from %s (%s), not a query entity of %v", d.ID, p.Path, p.From, p.FromKind, roots)
			}
			if !ents[p.To] || len(p.Steps) < 1 || len(p.Steps) > 2 {
				t.Errorf("%s: path %q ends at %s in %d steps", d.ID, p.Path, p.To, len(p.Steps))
			}
			at, rel := p.From, 0.0
			for _, s := range p.Steps {
				stored := kg.Edge{From: s.From, PID: s.PID, To: s.To}
				if s.Backward {
					stored.From, stored.To = s.To, s.From
				}
				if s.From != at || !edgeSet(t, g, []string{s.From})[stored] {
					t.Errorf("%s: step %+v of %q is not a KG edge from %s", d.ID, s, p.Path, at)
				}
				want := vec.Cosine64(qvec, encode(t, pathrel.Text(s.Label, s.PID, false)))
				if math.Abs(s.Relevance-want) > 1e-6 {
					t.Errorf("%s: step %s relevance %v, want cos(Q, %q) = %v", d.ID, s.PID, s.Relevance, s.Label, want)
				}
				rel += s.Relevance
				at = s.To
			}
			if len(p.Steps) == 2 {
				rel = rel/2 - pathrel.TwoHopPenalty
				// An entity reached through n intermediates carries
				// ViaBonus x ln(n) on top.
				if n := math.Exp((p.Relevance - rel) / pathrel.ViaBonus); p.Relevance > rel+1e-9 && math.Round(n) >= 2 && math.Abs(n-math.Round(n)) < 1e-6 {
					rel = p.Relevance
				}
			}
			if at != p.To || math.Abs(p.Relevance-rel) > 1e-9 {
				t.Errorf("%s: path %q ends at %s with relevance %v, want %s and %v", d.ID, p.Path, at, p.Relevance, p.To, rel)
			}
		}
		if gp := d.Breakdown.Graph; gp != nil {
			found := false
			for _, p := range ps {
				found = found || (p.From == gp.Steps[0].From && p.To == d.ID && p.Relevance >= gp.Relevance)
			}
			if !found {
				t.Errorf("%s: the channel's path %q is not named in %v", d.ID, gp.Path, ps)
			}
		}
	}
}

func encode(t *testing.T, s string) []float32 {
	t.Helper()
	v, err := scoringtest.Words{}.Encode(context.Background(), []string{s})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func rootsOf(res *pipeline.Result) map[string]string {
	out := map[string]string{}
	for _, e := range res.QueryEntities {
		out[e.QID] = pipeline.FromQueryEntity
	}
	return out
}

// In dmar's mode, the answer to "who is the director of Inception" names the
// one-hop path that brought it: Inception -[director]-> Nolan, from the
// query entity that phi names; every result and anchor names its paths, and
// the Browser statement draws exactly the results' paths.
func TestResultsNameTheirPaths(t *testing.T) {
	var drawn []kg.Path
	p := newPipeline(t, func(c *pipeline.Config) { c.Graph = drawingGraph{Graph: c.Graph.(*memkg.Graph), drawn: &drawn} })
	res, err := p.Retrieve(context.Background(), director, p.Defaults().QuestionAware().WithPaperStages()) // anchors and their phi
	if err != nil {
		t.Fatal(err)
	}
	roots := rootsOf(res)
	if roots[inception] != pipeline.FromQueryEntity {
		t.Fatalf("query entities %v: Inception is not linked", res.QueryEntities)
	}
	// graph_roots 1: the top stage-1 document's entity is a root too.
	first, _, err := p.Candidates(context.Background(), director, p.Defaults().QuestionAware())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := roots[first[0].ID]; !ok {
		roots[first[0].ID] = pipeline.FromTopDocument
	}
	var answer *pipeline.Doc
	for i, d := range res.Results {
		if d.ID == nolanQID {
			answer = &res.Results[i]
		}
	}
	if answer == nil {
		t.Fatalf("Nolan is not among the results %v", res.Results)
	}
	best := answer.Breakdown.Paths[0]
	if best.From != inception || best.To != nolanQID || len(best.Steps) != 1 || best.Steps[0].PID != "P57" || best.Steps[0].Backward {
		t.Fatalf("Nolan's best path %+v, want Q25188 -[P57 director]-> Q25191", best)
	}
	if best.Path != "Q25188 -[director]-> Q25191" || best.Text != "Inception -[director]-> Christopher Edward Nolan" ||
		best.FromLabel != "Inception" || best.ToLabel != "Christopher Edward Nolan" || best.Relevance <= 0 {
		t.Fatalf("Nolan's best path reads %q / %q (relevance %v)", best.Path, best.Text, best.Relevance)
	}
	phi := false
	for _, a := range res.Anchors {
		for _, f := range a.Phi {
			phi = phi || f.QID == best.From
		}
	}
	if !phi {
		t.Errorf("the path starts from %s, which no anchor's phi names", best.From)
	}
	qvec := encode(t, director)
	checkNamed(t, p.Graph(), qvec, roots, res.Results)
	anchors := anchorsDocs(res)
	checkNamed(t, p.Graph(), qvec, roots, anchors)
	for _, a := range res.Anchors {
		if a.Breakdown.Paths == nil {
			t.Errorf("anchor %s names no path list", a.ID)
		}
	}

	// The Browser statement: the results' paths, each once, edges as stored.
	if res.Neo4jPaths == nil || res.Neo4jPaths.Cypher != "paths" {
		t.Fatalf("neo4j_paths %+v", res.Neo4jPaths)
	}
	want := map[string]bool{}
	for _, d := range res.Results {
		for _, q := range d.Breakdown.Paths {
			want[q.Path] = true
		}
	}
	if len(drawn) != len(want) || res.Neo4jPaths.Params["n"] != len(want) {
		t.Fatalf("drew %d paths, the results name %d distinct ones", len(drawn), len(want))
	}
	edges := edgeSet(t, p.Graph(), []string{inception, nolanQID})
	for _, dp := range drawn {
		if len(dp.Edges) == 0 || !strings.Contains(dp.Name, "result ") {
			t.Errorf("drawn path %+v", dp)
		}
		if dp.Edges[0].From == inception || dp.Edges[0].To == inception {
			if !edges[kg.Edge{From: dp.Edges[0].From, PID: dp.Edges[0].PID, To: dp.Edges[0].To}] {
				t.Errorf("drawn edge %+v is not stored that way", dp.Edges[0])
			}
		}
	}
}

// The paper's mode names paths too, from G_Q's roots (the phi's query
// entities), on results of both stages.
func TestPaperModeNamesPaths(t *testing.T) {
	p := newPipeline(t, nil)
	res := retrieve(t, p, director, p.Defaults())
	roots := rootsOf(res)
	checkNamed(t, p.Graph(), encode(t, director), roots, res.Results)
	checkNamed(t, p.Graph(), encode(t, director), roots, anchorsDocs(res))
	named := 0
	for _, d := range append(res.Results, anchorsDocs(res)...) {
		for _, q := range d.Breakdown.Paths {
			if q.From != inception {
				t.Errorf("%s: a path from %s; G_Q is Inception's subgraph only", d.ID, q.From)
			}
			if q.To == nolanQID && q.Steps[0].PID == "P57" {
				named++
			}
		}
	}
	if named == 0 {
		t.Error("no result or anchor names Inception -[director]-> Nolan")
	}
	if res.Neo4jPaths != nil {
		t.Error("the embedded graph has no Browser, but the response carries a statement")
	}
}

// Among equally relevant paths a film's own comes first: "Which films did
// Nolan direct" names, for each of his films, Nolan -[director of]-> it
// before the same relation to the other films its page mentions.
func TestOwnEntityPathFirst(t *testing.T) {
	p := newPipeline(t, nil)
	res := retrieve(t, p, nolan, p.Defaults())
	checkNamed(t, p.Graph(), encode(t, nolan), rootsOf(res), res.Results)
	ties := 0
	for _, d := range res.Results {
		own := -1
		for i, q := range d.Breakdown.Paths {
			if q.To == d.ID {
				own = i
			}
		}
		for i, q := range d.Breakdown.Paths {
			if q.To != d.ID && own >= 0 && q.Relevance == d.Breakdown.Paths[own].Relevance {
				ties++
				if i < own {
					t.Errorf("%s names %q before its own, as relevant %q", d.ID, q.Path, d.Breakdown.Paths[own].Path)
				}
			}
		}
	}
	if ties == 0 {
		t.Fatal("no result names another path as relevant as its own: the test proves nothing")
	}
}

// With the structural path off, Q is still linked (the graph channel and
// the final ranking read its entities) and the channel walks from them:
// their paths start from a query entity, though no G_Q or phi names it.
func TestStructureOffNamesTheChannelsPaths(t *testing.T) {
	p := newPipeline(t, nil)
	o := p.Defaults().QuestionAware()
	o.Structure = "off"
	res := retrieve(t, p, director, o)
	if len(res.QueryEntities) != 1 || res.QueryEntities[0].QID != inception || len(res.QuerySubgraphs) != 0 || len(res.Anchors) > 0 && len(res.Anchors[0].Phi) != 0 {
		t.Fatalf("structure off: query entities %v, %d query subgraphs, anchors %v", res.QueryEntities, len(res.QuerySubgraphs), res.Anchors)
	}
	named := 0
	for _, d := range res.Results {
		for _, q := range d.Breakdown.Paths {
			if q.From == inception {
				named++
				if q.FromKind != pipeline.FromQueryEntity {
					t.Errorf("%s: the path %q from Inception says %s", d.ID, q.Path, q.FromKind)
				}
			}
		}
	}
	if named == 0 {
		t.Fatal("no result names a path from Inception")
	}
}

// A document no path reaches says so: an empty list, not an absent one.
func TestNoPathIsAnEmptyList(t *testing.T) {
	p := newPipeline(t, nil)
	// No root at all: Q links to nothing, and no stage-1 hit becomes one
	// (hybrid stage 1 always has a nearest page).
	qa := p.Defaults().QuestionAware()
	qa.GraphRoots = 0
	for _, o := range []pipeline.Options{p.Defaults(), qa} {
		res := retrieve(t, p, "zzzz qqqq", o)
		if len(res.QueryEntities) != 0 || len(res.Results) == 0 {
			t.Fatalf("%d query entities, %d results", len(res.QueryEntities), len(res.Results))
		}
		for _, d := range res.Results {
			if d.Breakdown.Paths == nil || len(d.Breakdown.Paths) != 0 {
				t.Fatalf("%s: paths %v, want []", d.ID, d.Breakdown.Paths)
			}
		}
		b, err := json.Marshal(res.Results[0])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"paths":[]`) {
			t.Errorf("a result without paths encodes as %s", b)
		}
	}
}

// kg-walk's results name their paths as well.
func TestGraphWalkNamesPaths(t *testing.T) {
	p := newPipeline(t, nil)
	o := p.Defaults()
	o.GraphRecall, o.GraphRelations = 1, "plain" // plain: checkNamed recomputes undirected relevance
	res := answer(t, p.GraphWalk, director, o)
	checkNamed(t, p.Graph(), encode(t, director), rootsOf(res), res.Results)
	for _, d := range res.Results {
		if d.ID != nolanQID {
			continue
		}
		if got := d.Breakdown.Paths[0].Path; got != "Q25188 -[director]-> Q25191" {
			t.Errorf("Nolan names %q first", got)
		}
		return
	}
	t.Fatalf("Nolan is not among kg-walk's results")
}
