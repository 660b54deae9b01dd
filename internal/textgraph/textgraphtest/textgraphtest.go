// Package textgraphtest is the conformance suite of the text graph's Store
// port. The suite builds a small text graph over codexm-film's documents
// (Build: the heuristic extractor, the film KG, a deterministic encoder);
// every backend loads that graph and must answer Match and Neighbourhood as
// a deliberately plain reference computes them from the graph's exported
// nodes and edges, so that the walk over either backend ranks the same.
package textgraphtest

import (
	"context"
	"hash/fnv"
	"math"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/textgraph"
)

// Encoder is a deterministic stand-in for the sentence encoder: a text's
// character trigrams hashed into 64 dimensions, so that phrases sharing
// most of their letters are close ("Nolan" and "Christopher Nolan").
// Texts, when set, counts the texts it embeds.
type Encoder struct{ Texts *atomic.Int64 }

// Dim implements scoring.Encoder.
func (Encoder) Dim() int { return 64 }

// Version implements scoring.Encoder.
func (Encoder) Version() string { return "trigram-64" }

// Encode implements scoring.Encoder.
func (e Encoder) Encode(_ context.Context, texts []string) ([][]float32, error) {
	if e.Texts != nil {
		e.Texts.Add(int64(len(texts)))
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		s := " " + strings.ToLower(t) + " "
		for j := 0; j+3 <= len(s); j++ {
			h := fnv.New32a()
			h.Write([]byte(s[j : j+3]))
			v[h.Sum32()%64]++
		}
		out[i] = v
	}
	return out, nil
}

// Build is the suite's graph: the first 60 codexm-film documents, their
// phrases found by the heuristic extractor and linked with the film KG; and
// the documents and the builder it was built with.
func Build(t testing.TB) (*textgraph.Memory, []retrieval.Document, textgraph.Builder) {
	t.Helper()
	docs, g := filmDocs(t, 60)
	m := textgraph.NewMemory()
	tb := textgraph.Builder{Extractor: textgraph.Heuristic{}, Linker: g, KG: g, Encoder: Encoder{}, SynonymMin: 0.6}
	if err := m.Put(context.Background(), tb, docs); err != nil {
		t.Fatal(err)
	}
	return m, docs, tb
}

// filmDocs are the first n codexm-film documents, linked with its KG.
func filmDocs(t testing.TB, n int) ([]retrieval.Document, *memkg.Graph) {
	t.Helper()
	dir, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := bundle.Read(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	g := memkg.FromBundle(b)
	docs, _, err := corpus.ReadFile(ctx, dir+"/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	docs = docs[:min(len(docs), n)]
	for i := range docs {
		if err := corpus.Link(ctx, g, &docs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return docs, g
}

// Writes makes the same live writes to st, which must hold Build's graph,
// and to ref, Build's graph itself: five passages new to it, one changed
// (another document's title and text under its ID) and two deleted. Run(t,
// st, ref) then checks that st follows ref.
func Writes(t *testing.T, st textgraph.Writable, ref *textgraph.Memory, b textgraph.Builder) {
	t.Helper()
	ctx := context.Background()
	all, _ := filmDocs(t, 70)
	if len(all) < 70 {
		t.Fatalf("codexm-film has %d documents, the suite needs 70", len(all))
	}
	changed := all[66]
	changed.ID = all[3].ID
	put := append(append([]retrieval.Document{}, all[60:65]...), changed)
	gone := []string{all[5].ID, all[7].ID}
	for _, w := range []textgraph.Writable{ref, st} {
		if err := w.Put(ctx, b, put); err != nil {
			t.Fatal(err)
		}
		if err := w.Delete(ctx, gone); err != nil {
			t.Fatal(err)
		}
	}
}

// Run checks st, which must hold exactly ref (Build's graph).
func Run(t *testing.T, st textgraph.Store, ref *textgraph.Memory) {
	t.Helper()
	ctx := context.Background()
	nodes, edges := ref.Export()
	if len(nodes) == 0 || len(edges) == 0 {
		t.Fatal("the reference graph is empty")
	}
	r := newReference(nodes, edges)
	var phrases, passages []string
	for _, n := range nodes {
		switch textgraph.KindOf(n.Key) {
		case textgraph.PassageNode:
			passages = append(passages, n.Key)
		default:
			if n.Passages > 0 {
				phrases = append(phrases, n.Key)
			}
		}
	}
	seedSets := [][]string{
		{"e:Q25191"}, // Christopher Nolan
		{"e:Q25188", "p:no such phrase"},
		{passages[0], phrases[len(phrases)/2]},
		{phrases[0], phrases[len(phrases)-1], passages[len(passages)-1]},
	}
	for _, seeds := range seedSets {
		for _, p := range []textgraph.Params{{Hops: 1, HubDegree: 30}, {Hops: 2, HubDegree: 30}, {Hops: 3, HubDegree: 15}, {Hops: 2, HubDegree: 1000}} {
			got, err := st.Neighbourhood(ctx, seeds, p)
			if err != nil {
				t.Fatalf("Neighbourhood(%v, %+v): %v", seeds, p, err)
			}
			want := r.neighbourhood(seeds, p)
			if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-5), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Neighbourhood(%v, %+v) (-want +got):\n%s", seeds, p, diff)
				continue
			}
			// The walk over it ranks as over the reference.
			seedW := []textgraph.Seed{{Key: seeds[0], W: 1, Why: "test"}}
			a, _ := textgraph.Rank(ctx, want, seedW, textgraph.DefaultRankParams())
			b, _ := textgraph.Rank(ctx, got, seedW, textgraph.DefaultRankParams())
			if diff := cmp.Diff(a, b, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("Rank over Neighbourhood(%v, %+v) (-reference +backend):\n%s", seeds, p, diff)
			}
		}
	}
	if _, err := st.Neighbourhood(ctx, seedSets[0], textgraph.Params{Hops: 9, HubDegree: 10}); err == nil {
		t.Error("Neighbourhood with 9 hops: no error")
	}

	t.Run("Match", func(t *testing.T) {
		q, _ := Encoder{}.Encode(ctx, []string{"Christopher Nolan films"})
		keys := []string{"e:Q25188", "p:no such phrase", passages[0], phrases[1]}
		got, err := st.Match(ctx, keys, q[0], 5, 0.3)
		if err != nil {
			t.Fatal(err)
		}
		want := r.match(keys, q[0], 5, 0.3)
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-4), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Match (-want +got):\n%s", diff)
		}
		got, err = st.Match(ctx, keys, nil, 5, 0.3)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[:len(r.exact(keys))], got, cmpopts.EquateApprox(0, 1e-4), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Match without a vector (-want +got):\n%s", diff)
		}
	})
}

// reference answers as the port's rules say, from the exported graph.
type reference struct {
	nodes map[string]textgraph.ExportNode
	order []string
	adj   map[string][]textgraph.Edge
}

func newReference(nodes []textgraph.ExportNode, edges []textgraph.Edge) reference {
	r := reference{nodes: map[string]textgraph.ExportNode{}, adj: map[string][]textgraph.Edge{}}
	for _, n := range nodes {
		r.nodes[n.Key] = n
		r.order = append(r.order, n.Key)
	}
	for _, e := range edges {
		r.adj[e.From] = append(r.adj[e.From], e)
		r.adj[e.To] = append(r.adj[e.To], e)
	}
	return r
}

func other(e textgraph.Edge, k string) string {
	if e.From == k {
		return e.To
	}
	return e.From
}

// neighbourhood is a plain breadth-first walk: level by level, a node
// expanded when it is a seed or has at most HubDegree edges.
func (r reference) neighbourhood(seeds []string, p textgraph.Params) textgraph.Subgraph {
	hop := map[string]int{}
	var level []string
	for _, s := range seeds {
		if _, ok := r.nodes[s]; ok {
			if _, dup := hop[s]; !dup {
				hop[s] = 0
				level = append(level, s)
			}
		}
	}
	walked := map[string]bool{}
	for h := 0; h < p.Hops; h++ {
		var next []string
		for _, k := range level {
			if h > 0 && len(r.adj[k]) > p.HubDegree {
				continue
			}
			walked[k] = true
			for _, e := range r.adj[k] {
				if o := other(e, k); !has(hop, o) {
					hop[o] = h + 1
					next = append(next, o)
				}
			}
		}
		level = next
	}
	keys := make([]string, 0, len(hop))
	for k := range hop {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if hop[keys[i]] != hop[keys[j]] {
			return hop[keys[i]] < hop[keys[j]]
		}
		return keys[i] < keys[j]
	})
	sg := textgraph.Subgraph{}
	at := map[string]int{}
	for i, k := range keys {
		at[k] = i
		deg := len(r.adj[k])
		sg.Nodes = append(sg.Nodes, textgraph.Node{Key: k, Kind: textgraph.KindOf(k), Label: r.nodes[k].Label, Hop: hop[k], Degree: deg, Hub: deg > p.HubDegree})
	}
	seen := map[textgraph.Edge]bool{}
	for _, k := range keys {
		if !walked[k] {
			continue
		}
		for _, e := range r.adj[k] {
			if seen[e] {
				continue
			}
			seen[e] = true
			e.A, e.B = at[e.From], at[e.To]
			sg.Edges = append(sg.Edges, e)
		}
	}
	textgraph.SortEdges(sg.Edges)
	return sg
}

func has(m map[string]int, k string) bool { _, ok := m[k]; return ok }

// exact are the phrase and entity nodes among keys, in keys' order.
func (r reference) exact(keys []string) []textgraph.Match {
	var out []textgraph.Match
	seen := map[string]bool{}
	for _, k := range keys {
		if n, ok := r.nodes[k]; ok && !seen[k] && textgraph.KindOf(k) != textgraph.PassageNode {
			seen[k] = true
			out = append(out, textgraph.Match{Key: k, Label: n.Label, Score: 1, Passages: n.Passages})
		}
	}
	return out
}

// match is exact, then the k nodes held by a passage nearest v by cosine.
func (r reference) match(keys []string, v []float32, k int, minCos float64) []textgraph.Match {
	out := r.exact(keys)
	taken := map[string]bool{}
	for _, m := range out {
		taken[m.Key] = true
	}
	var vn float64
	for _, x := range v {
		vn += float64(x) * float64(x)
	}
	var near []textgraph.Match
	for _, key := range r.order {
		n := r.nodes[key]
		if taken[key] || len(n.Vector) == 0 || n.Passages == 0 {
			continue
		}
		var dot, nn float64
		for i := range v {
			dot += float64(v[i]) * float64(n.Vector[i])
			nn += float64(n.Vector[i]) * float64(n.Vector[i])
		}
		if c := dot / math.Sqrt(vn*nn); c >= minCos {
			near = append(near, textgraph.Match{Key: key, Label: n.Label, Score: c, Passages: n.Passages})
		}
	}
	sort.SliceStable(near, func(i, j int) bool {
		if near[i].Score != near[j].Score {
			return near[i].Score > near[j].Score
		}
		return near[i].Key < near[j].Key
	})
	return append(out, near[:min2(len(near), k)]...)
}

func min2(a, b int) int {
	if a < b {
		return a
	}
	return b
}
