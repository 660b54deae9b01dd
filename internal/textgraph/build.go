package textgraph

import (
	"context"
	"fmt"
	"sort"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/samber/lo"
)

// Version names the rules a graph was built under; a snapshot of another
// version is built again.
const Version = "textgraph-2"

// Builder turns documents into the text graph's parts: it extracts their
// phrases, names the KG entity of each phrase that names one (a whole-phrase
// link), joins the entities the documents were linked to at load, embeds
// new nodes for synonym edges and question matching, and reads the KG's
// edges between entity nodes.
type Builder struct {
	Extractor Extractor
	// Linker names phrases' entities: the graph the corpus was linked
	// with; nil: no phrase becomes an entity (documents' own links still
	// join).
	Linker kg.Graph
	// KG gives the edges between entity nodes; nil: none.
	KG      kg.Graph
	Encoder scoring.Encoder
	// SynonymMin and SynonymK: a new phrase is joined to at most SynonymK
	// phrases sharing a word with it whose cosine is at least SynonymMin
	// (HippoRAG 2: 0.8).
	SynonymMin float64
	SynonymK   int
	// Vectors, when set, holds labels' vectors from earlier batches,
	// builds and writes: only labels it lacks are embedded (and added).
	// A cache of another encoder than Encoder is not read.
	Vectors *Vectors
}

// DefaultSynonymMin and DefaultSynonymK are HippoRAG 2's threshold and a
// cap on each phrase's synonyms.
const (
	DefaultSynonymMin = 0.8
	DefaultSynonymK   = 10
)

// Part is one passage's part of the graph: its nodes (besides itself) with
// labels, and the edges it contributes. A store keeps it, to take the
// passage's contributions back when it changes or goes.
type Part struct {
	ID, Title string
	Nodes     []NodeRef
	Pairs     []Pair
}

// NodeRef is a node's key and label.
type NodeRef struct{ Key, Label string }

// Pair is an edge a passage contributes, with its weight.
type Pair struct {
	A, B string // node keys, A < B
	Kind EdgeKind
	W    float64
}

// Prepared is a write's share of the graph, ready for a store to apply:
// each passage's part, the nodes new to the store (labelled, embedded, with
// their words) and the KG's edges from the new entity nodes.
type Prepared struct {
	Parts   []Part
	Fresh   []Fresh
	KGEdges [][2]string
}

// Fresh is a node new to the store.
type Fresh struct {
	Key, Label string
	Vector     []float32 // a unit vector; nil without an encoder
	Words      []string  // NodeWords: what its synonym candidates share with it
}

// Prepare extracts and links docs' phrases, and labels, embeds and relates
// the nodes that known (the store's answer to which keys it holds) does not
// report, before the store takes any lock.
func (b Builder) Prepare(ctx context.Context, docs []retrieval.Document, known func(context.Context, []string) (map[string]bool, error)) (Prepared, error) {
	exs, err := b.extract(ctx, docs)
	if err != nil {
		return Prepared{}, err
	}
	return b.prepareExtracted(ctx, docs, exs, known)
}

// prepareExtracted is Prepare once docs' phrases are extracted (exs, one
// per document), so that a build can extract the next batch meanwhile.
func (b Builder) prepareExtracted(ctx context.Context, docs []retrieval.Document, exs []Extraction, known func(context.Context, []string) (map[string]bool, error)) (Prepared, error) {
	pps, err := b.parts(ctx, docs, exs)
	if err != nil {
		return Prepared{}, err
	}
	var refs []NodeRef
	seen := map[string]bool{}
	for _, pp := range pps {
		for _, n := range pp.Nodes {
			if !seen[n.Key] {
				seen[n.Key] = true
				refs = append(refs, n)
			}
		}
	}
	keys := make([]string, len(refs))
	for i, n := range refs {
		keys[i] = n.Key
	}
	have, err := known(ctx, keys)
	if err != nil {
		return Prepared{}, fmt.Errorf("the text graph's nodes: %w", err)
	}
	var fresh []NodeRef
	for _, n := range refs {
		if !have[n.Key] {
			fresh = append(fresh, n)
		}
	}
	labels, err := b.labels(ctx, fresh)
	if err != nil {
		return Prepared{}, err
	}
	vecs, err := b.embed(ctx, labels)
	if err != nil {
		return Prepared{}, err
	}
	kgEdges, err := b.kgEdges(ctx, fresh)
	if err != nil {
		return Prepared{}, err
	}
	out := Prepared{Parts: pps, KGEdges: kgEdges, Fresh: make([]Fresh, len(fresh))}
	for i, n := range fresh {
		out.Fresh[i] = Fresh{Key: n.Key, Label: labels[i], Vector: unit(vecs[i]), Words: NodeWords(n.Key, labels[i])}
	}
	return out, nil
}

// extract is docs' phrases, one extraction per document.
func (b Builder) extract(ctx context.Context, docs []retrieval.Document) ([]Extraction, error) {
	ps := make([]Passage, len(docs))
	for i, d := range docs {
		ps[i] = Passage{ID: d.ID, Title: d.Title, Text: d.Text}
	}
	exs, err := b.Extractor.Extract(ctx, ps)
	if err != nil {
		return nil, fmt.Errorf("extract phrases (%s): %w", b.Extractor.Name(), err)
	}
	if len(exs) != len(docs) {
		return nil, fmt.Errorf("extractor %s returned %d extractions for %d passages", b.Extractor.Name(), len(exs), len(docs))
	}
	return exs, nil
}

// parts links docs' extracted phrases.
func (b Builder) parts(ctx context.Context, docs []retrieval.Document, exs []Extraction) ([]Part, error) {
	out := make([]Part, len(docs))
	for i, d := range docs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pp, err := b.passage(ctx, d, exs[i])
		if err != nil {
			return nil, err
		}
		out[i] = pp
	}
	return out, nil
}

// passage is one document's parts: a node per phrase (its entity's when the
// whole phrase links to one), a node per entity the document was linked
// to, Contains edges to each, Cooccur edges between the phrases of one
// sentence and Related edges between a triple's subject and object.
func (b Builder) passage(ctx context.Context, d retrieval.Document, ex Extraction) (Part, error) {
	pp := Part{ID: d.ID, Title: d.Title}
	seen := map[string]bool{}
	keyOf := map[string]string{} // phrase Key -> node key
	add := func(key, label string) {
		if !seen[key] {
			seen[key] = true
			pp.Nodes = append(pp.Nodes, NodeRef{Key: key, Label: label})
		}
	}
	bySentence := map[int][]string{}
	for _, ph := range ex.Phrases {
		k := Key(ph.Text)
		if k == "" {
			continue
		}
		node, ok := keyOf[k]
		if !ok {
			node = PhraseKey(k)
			if q, err := b.entityOf(ctx, ph.Text); err != nil {
				return pp, err
			} else if q != "" {
				node = EntityKey(q)
			}
			keyOf[k] = node
		}
		add(node, ph.Text)
		bySentence[ph.Sentence] = append(bySentence[ph.Sentence], node)
	}
	for _, q := range d.Entities {
		add(EntityKey(q), "")
	}
	pairs := map[[3]string]float64{}
	// An extraction with triples joins its phrases by them (HippoRAG's
	// design); one without, by the sentences they share.
	if len(ex.Triples) > 0 {
		bySentence = nil
	}
	for _, nodes := range bySentence {
		for i := range nodes {
			for j := i + 1; j < len(nodes); j++ {
				if a, c := order(nodes[i], nodes[j]); a != c {
					pairs[[3]string{a, c, "c"}]++
				}
			}
		}
	}
	for _, t := range ex.Triples {
		s, o := keyOf[Key(t.Subject)], keyOf[Key(t.Object)]
		if s == "" || o == "" || s == o {
			continue
		}
		a, c := order(s, o)
		pairs[[3]string{a, c, "r"}]++
	}
	for _, n := range pp.Nodes {
		pp.Pairs = append(pp.Pairs, Pair{A: PassageKey(d.ID), B: n.Key, Kind: Contains, W: 1})
	}
	keys := make([][3]string, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		if keys[i][1] != keys[j][1] {
			return keys[i][1] < keys[j][1]
		}
		return keys[i][2] < keys[j][2]
	})
	for _, k := range keys {
		kind := Cooccur
		if k[2] == "r" {
			kind = Related
		}
		pp.Pairs = append(pp.Pairs, Pair{A: k[0], B: k[1], Kind: kind, W: pairs[k]})
	}
	return pp, nil
}

func order(a, b string) (string, string) {
	if a > b {
		return b, a
	}
	return a, b
}

// entityOf is the QID the whole phrase links to, "" when it names no
// entity (or names more than one, or only part of it links).
func (b Builder) entityOf(ctx context.Context, text string) (string, error) {
	if b.Linker == nil {
		return "", nil
	}
	ms, err := b.Linker.Link(ctx, text)
	if err != nil {
		return "", fmt.Errorf("link phrase %q: %w", text, err)
	}
	if len(ms) != 1 || kg.NormalizeForm(ms[0].Surface) != kg.NormalizeForm(text) {
		return "", nil
	}
	return ms[0].QID, nil
}

// SynonymMinimum is SynonymMin, DefaultSynonymMin when unset.
func (b Builder) SynonymMinimum() float64 {
	if b.SynonymMin > 0 {
		return b.SynonymMin
	}
	return DefaultSynonymMin
}

// SynonymCount is SynonymK, DefaultSynonymK when unset.
func (b Builder) SynonymCount() int {
	if b.SynonymK > 0 {
		return b.SynonymK
	}
	return DefaultSynonymK
}

// labels are the nodes' labels: a phrase's text as first written, an
// entity's KG label (its text when the KG has none).
func (b Builder) labels(ctx context.Context, nodes []NodeRef) ([]string, error) {
	out := make([]string, len(nodes))
	var qids []string
	for i, n := range nodes {
		out[i] = n.Label
		if KindOf(n.Key) == EntityNode {
			qids = append(qids, n.Key[len(entityPrefix):])
		}
	}
	g := b.KG
	if g == nil {
		g = b.Linker
	}
	if g == nil || len(qids) == 0 {
		return out, nil
	}
	ents, err := g.Entities(ctx, qids)
	if err != nil {
		return nil, fmt.Errorf("entities' labels: %w", err)
	}
	for i, n := range nodes {
		if e, ok := ents[n.Key[min(len(n.Key), len(entityPrefix)):]]; ok && KindOf(n.Key) == EntityNode && e.Label != "" {
			out[i] = e.Label
		}
		if out[i] == "" {
			out[i] = n.Key[len(entityPrefix):]
		}
	}
	return out, nil
}

// corpusEncoder is an encoder with a path for many texts at once
// (onnx.Encoder: length-bucketed batches, one model call per core).
type corpusEncoder interface {
	EncodeCorpus(ctx context.Context, texts []string, m *progress.Meter) ([][]float32, error)
}

// embed encodes labels, through the encoder's corpus path when it has one;
// with a cache of the encoder's vectors, only the labels it lacks, once each.
func (b Builder) embed(ctx context.Context, labels []string) ([][]float32, error) {
	if b.Encoder == nil || len(labels) == 0 {
		return make([][]float32, len(labels)), nil
	}
	if b.Vectors == nil || b.Vectors.encoder != b.Encoder.Version() {
		return b.encode(ctx, labels)
	}
	out, miss := b.Vectors.get(labels)
	if len(miss) == 0 {
		return out, nil
	}
	vs, err := b.encode(ctx, miss)
	if err != nil {
		return nil, err
	}
	b.Vectors.put(miss, vs)
	got := make(map[string][]float32, len(miss))
	for i, l := range miss {
		got[l] = vs[i]
	}
	for i, l := range labels {
		if out[i] == nil {
			out[i] = got[l]
		}
	}
	return out, nil
}

// encode embeds labels, through the encoder's corpus path when it has one.
func (b Builder) encode(ctx context.Context, labels []string) ([][]float32, error) {
	if ce, ok := b.Encoder.(corpusEncoder); ok {
		vs, err := ce.EncodeCorpus(ctx, labels, nil)
		if err != nil {
			return nil, fmt.Errorf("embed phrases: %w", err)
		}
		return vs, nil
	}
	const batch = 256
	out := make([][]float32, 0, len(labels))
	for _, part := range lo.Chunk(labels, batch) {
		vs, err := b.Encoder.Encode(ctx, part)
		if err != nil {
			return nil, fmt.Errorf("embed phrases: %w", err)
		}
		out = append(out, vs...)
	}
	return out, nil
}

// kgEdges are the KG's edges from the new entity nodes, as node key pairs
// (read in one Neighbourhoods call: each entity's own edges).
func (b Builder) kgEdges(ctx context.Context, nodes []NodeRef) ([][2]string, error) {
	if b.KG == nil {
		return nil, nil
	}
	var qids []string
	for _, n := range nodes {
		if KindOf(n.Key) == EntityNode {
			qids = append(qids, n.Key[len(entityPrefix):])
		}
	}
	if len(qids) == 0 {
		return nil, nil
	}
	subs, err := kg.Neighbourhoods(ctx, b.KG, qids, kg.SubgraphParams{Hops: 1})
	if err != nil {
		return nil, fmt.Errorf("the KG's edges between entities: %w", err)
	}
	var out [][2]string
	for _, q := range qids {
		for _, e := range subs[q].Edges {
			if e.From != e.To {
				out = append(out, [2]string{EntityKey(e.From), EntityKey(e.To)})
			}
		}
	}
	return out, nil
}

// QuestionKeys are the node keys a question may name: every span of up to
// kg.MaxMentionTokens words as a phrase key (the store keeps those it
// holds), and the entities the linker links in it (their nodes hold the
// phrases that name them). Each key once, spans first, in the question's
// order.
func QuestionKeys(ctx context.Context, linker kg.Graph, question string) ([]string, error) {
	var out []string
	_, forms := kg.Spans(question)
	for _, f := range forms {
		if k := Key(f); k != "" {
			out = append(out, PhraseKey(k))
		}
	}
	if linker != nil {
		ms, err := linker.Link(ctx, question)
		if err != nil {
			return nil, fmt.Errorf("link the question: %w", err)
		}
		for _, m := range ms {
			out = append(out, EntityKey(m.QID))
		}
	}
	return lo.Uniq(out), nil
}
