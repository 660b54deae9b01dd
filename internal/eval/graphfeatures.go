package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/npy"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
	"github.com/dmar-kg/dmar/internal/vec"
)

// GraphSource is what GraphFeatures reads (pipeline.Pipeline satisfies it).
type GraphSource interface {
	LinkQuery(ctx context.Context, query string, qvec []float32, opts pipeline.Options) ([]kg.Mention, error)
	ChannelSubgraphs(ctx context.Context, roots []string, hops, hubDegree int) (map[string]kg.Subgraph, error)
	Defaults() pipeline.Options
	Index() retrieval.Index
	Encoder() scoring.Encoder
}

// graphMaxTwoHop caps the two-hop paths kept per reached entity.
const graphMaxTwoHop = 4

// graphFeatureQuestion is one line of questions.jsonl.
type graphFeatureQuestion struct {
	ID       string           `json:"id"`
	Question string           `json:"question"`
	Gold     []string         `json:"gold"`
	Roots    []graphRoot      `json:"roots"`
	Cands    []graphCandidate `json:"cands"`
}

type graphRoot struct {
	QID        string  `json:"qid"`
	Surface    string  `json:"surface"`
	Confidence float64 `json:"confidence"`
}

// graphCandidate is an entity reached from a root: P1 holds its one-hop
// paths [root index, relation index, backward 0/1], P2 up to graphMaxTwoHop
// two-hop paths [root, rel1, back1, rel2, back2].
type graphCandidate struct {
	Entity string   `json:"e"`
	HasDoc bool     `json:"doc"`
	DocCos float64  `json:"dcos"`
	Hub    bool     `json:"hub,omitempty"`
	P1     [][3]int `json:"p1,omitempty"`
	P2     [][5]int `json:"p2,omitempty"`
}

// relIndex numbers the relations the questions' paths take, in the order
// they are met.
type relIndex struct {
	rels []graphRel
	idx  map[graphRel]int
}

type graphRel struct {
	PID   string `json:"pid"`
	Label string `json:"label"`
}

// of is e's relation's number.
func (x *relIndex) of(e kg.Edge) int {
	k := graphRel{e.PID, e.Label}
	i, ok := x.idx[k]
	if !ok {
		i = len(x.rels)
		x.idx[k] = i
		x.rels = append(x.rels, k)
	}
	return i
}

// GraphFeatures links every question of a labelled dataset as opts does,
// walks the graph channel's subgraphs hops deep and writes, for training and
// probing the question-conditioned path scorer, under out:
//
//	questions.jsonl  per question: gold, linked roots, reached entities and their paths
//	qvec.npy   [Q,D] float32  enc(Q)
//	rels.json  the relations, in relvec order: {pid, label}
//	relvec.npy [2R,D] float32 the relation texts embedded, forwards (2i) and backwards (2i+1)
//
// Questions whose run fails are counted, logged and skipped.
func GraphFeatures(ctx context.Context, p GraphSource, qs []Question, opts pipeline.Options, hops int, out string, stdout, stderr io.Writer) error {
	if err := pooledOnly(qs); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	rels := &relIndex{idx: map[graphRel]int{}}
	n, err := writeGraphQuestions(ctx, p, qs, opts, hops, rels, out, stderr)
	if err != nil {
		return err
	}
	if err := npy.Write(filepath.Join(out, "qvec.npy"), n.qvec, n.written, p.Encoder().Dim()); err != nil {
		return err
	}
	if err := writeRelations(ctx, p.Encoder(), rels.rels, out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "graph features: %d questions written, %d skipped, %d with a gold entity reached in %d hop(s), %d relations -> %s\n", n.written, n.skipped, n.reached, hops, len(rels.rels), out)
	return nil
}

// graphQuestions counts the questions written, skipped and with a gold
// entity reached, and holds the written ones' enc(Q).
type graphQuestions struct {
	written, skipped, reached int
	qvec                      []float32
}

// writeGraphQuestions writes questions.jsonl under out.
func writeGraphQuestions(ctx context.Context, p GraphSource, qs []Question, opts pipeline.Options, hops int, rels *relIndex, out string, stderr io.Writer) (graphQuestions, error) {
	var n graphQuestions
	f, err := os.Create(filepath.Join(out, "questions.jsonl"))
	if err != nil {
		return n, err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	meter := progress.New(stderr, "graph features", "questions", len(qs))
	for _, q := range qs {
		meter.Add(1)
		if err := ctx.Err(); err != nil {
			return n, err
		}
		row, qv, _, err := graphFeatureRow(ctx, p, q, opts, hops, rels.of)
		if err != nil {
			n.skipped++
			fmt.Fprintf(stderr, "graph features: skipped %s: %v\n", q.ID, err)
			continue
		}
		gold := set(q.Gold)
		for _, c := range row.Cands {
			if gold[c.Entity] {
				n.reached++
				break
			}
		}
		if err := enc.Encode(row); err != nil {
			return n, err
		}
		n.qvec = append(n.qvec, qv...)
		n.written++
	}
	return n, w.Flush()
}

// writeRelations writes rels.json and the relation texts' vectors under
// enc, relvec.npy, under out.
func writeRelations(ctx context.Context, enc scoring.Encoder, rels []graphRel, out string) error {
	texts := make([]string, 0, 2*len(rels))
	for _, r := range rels {
		texts = append(texts, pathrel.Text(r.Label, r.PID, false), pathrel.Text(r.Label, r.PID, true))
	}
	var relvec []float32
	for i := 0; i < len(texts); i += 256 {
		vs, err := enc.Encode(ctx, texts[i:min(i+256, len(texts))])
		if err != nil {
			return fmt.Errorf("encode relations: %w", err)
		}
		for _, v := range vs {
			relvec = append(relvec, v...)
		}
	}
	b, err := json.Marshal(rels)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "rels.json"), b, 0o644); err != nil {
		return err
	}
	return npy.Write(filepath.Join(out, "relvec.npy"), relvec, len(texts), enc.Dim())
}

// graphFeatureRow is one question's line: its linked roots, and every
// entity one or two hops from them with its paths and its document's
// cosine with enc(Q), which it also returns, with the linked mentions.
func graphFeatureRow(ctx context.Context, p GraphSource, q Question, opts pipeline.Options, hops int, relOf func(kg.Edge) int) (graphFeatureQuestion, []float32, []kg.Mention, error) {
	row := graphFeatureQuestion{ID: q.ID, Question: q.Question, Gold: q.Gold, Roots: []graphRoot{}, Cands: []graphCandidate{}}
	vs, err := p.Encoder().Encode(ctx, []string{q.Question})
	if err != nil {
		return row, nil, nil, err
	}
	qv := vs[0]
	ms, err := p.LinkQuery(ctx, q.Question, qv, opts)
	if err != nil {
		return row, nil, nil, err
	}
	rootIdx := map[string]int{}
	for _, m := range ms {
		if _, ok := rootIdx[m.QID]; ok {
			continue
		}
		rootIdx[m.QID] = len(row.Roots)
		row.Roots = append(row.Roots, graphRoot{QID: m.QID, Surface: m.Surface, Confidence: m.Confidence})
	}
	if len(row.Roots) == 0 {
		return row, qv, ms, nil
	}
	roots := make([]string, len(row.Roots))
	for i, r := range row.Roots {
		roots[i] = r.QID
	}
	subs, err := p.ChannelSubgraphs(ctx, roots, hops, opts.HubDegree)
	if err != nil {
		return row, nil, nil, err
	}
	cands := graphCandidates(roots, rootIdx, subs, hops, relOf)
	ids := make([]string, 0, len(cands))
	for e := range cands {
		ids = append(ids, e)
	}
	sort.Strings(ids)
	docs, err := p.Index().Documents(ctx, ids)
	if err != nil {
		return row, nil, nil, err
	}
	for _, d := range docs {
		if c, ok := cands[d.ID]; ok {
			c.HasDoc = true
			if len(d.Vector) == len(qv) {
				c.DocCos = vec.Cosine64(qv, d.Vector)
			}
		}
	}
	for _, e := range ids {
		row.Cands = append(row.Cands, *cands[e])
	}
	return row, qv, ms, nil
}

// graphCandidates are the entities one hop, and with hops >= 2 two hops,
// from roots in their subgraphs (never through a hub, never a root), with
// their paths.
func graphCandidates(roots []string, rootIdx map[string]int, subs map[string]kg.Subgraph, hops int, relOf func(kg.Edge) int) map[string]*graphCandidate {
	cands := map[string]*graphCandidate{}
	cand := func(e string, hub bool) *graphCandidate {
		c, ok := cands[e]
		if !ok {
			c = &graphCandidate{Entity: e, Hub: hub}
			cands[e] = c
		}
		return c
	}
	b2i := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	for ri, q := range roots {
		sg := subs[q]
		hub := map[string]bool{}
		for _, n := range sg.Nodes {
			hub[n.QID] = n.Hub
		}
		adj := map[string][]kg.Edge{}
		for _, e := range sg.Edges {
			if e.From != e.To {
				adj[e.From] = append(adj[e.From], e)
				adj[e.To] = append(adj[e.To], e)
			}
		}
		other := func(e kg.Edge, from string) (string, bool) {
			if e.From == from {
				return e.To, false
			}
			return e.From, true
		}
		for _, e1 := range adj[q] {
			mid, back1 := other(e1, q)
			if _, isRoot := rootIdx[mid]; !isRoot {
				c := cand(mid, hub[mid])
				c.P1 = append(c.P1, [3]int{ri, relOf(e1), b2i(back1)})
			}
			if hops < 2 || hub[mid] {
				continue
			}
			for _, e2 := range adj[mid] {
				to, back2 := other(e2, mid)
				if _, isRoot := rootIdx[to]; isRoot || to == mid {
					continue
				}
				c := cand(to, hub[to])
				if len(c.P2) < graphMaxTwoHop {
					c.P2 = append(c.P2, [5]int{ri, relOf(e1), b2i(back1), relOf(e2), b2i(back2)})
				}
			}
		}
	}
	return cands
}
