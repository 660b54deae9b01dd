// Package textchan is the text graph channel (text_graph;
// docs/textgraph.md): passages ranked by personalized PageRank over the
// graph built from the corpus's text (internal/textgraph: passages, their
// phrases and entities, synonym and KG edges), seeded with Q's linked
// entities, the phrases Q names or resembles, and the search's best
// passages. It is one of the pipeline's channels, candidate sources beside
// the searches (pipeline.Channel): it takes a chanio.Query and returns an
// Output, records a backend failure as a fallback in the chanio.Trace it is
// given and adds nothing then, and never sees the request. Its stages, each
// a function from the previous one's value to its own:
//
//	seeds          []textgraph.Seed     Q's entities, phrases and top passages (seeds)
//	neighbourhood  textgraph.Subgraph   the seeds' neighbourhood, one round trip
//	rank           []textgraph.Ranked   personalized PageRank over it, with each passage's best path
//	documents      Output               the k best passages, fetched, with their paths
package textchan

import (
	"context"
	"fmt"
	"math"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/textgraph"
)

// Params are the walk's settings that no request sets: dmar eval's ppr
// variants sweep them (Defaults).
type Params struct {
	Hops      int     // the neighbourhood's radius from the seeds
	HubDegree int     // a node with more edges is not expanded
	Passages  int     // the search hits seeded
	PassageW  float64 // a seeded passage's weight: PassageW x its min-max normalised search score
	Phrases   int     // the phrases seeded by similarity to enc(Q)
	PhraseMin float64 // the least cosine of such a phrase
	Damping   float64
}

// Defaults are HippoRAG 2's damping and passage weight, and the
// neighbourhood and seed sizes chosen on the halves named in
// docs/textgraph.md.
func Defaults() Params {
	return Params{Hops: 3, HubDegree: 50, Passages: 30, PassageW: 0.05, Phrases: 5, PhraseMin: 0.6, Damping: 0.5}
}

// Valid reports whether the settings are in range.
func (p Params) Valid() bool {
	return p.Hops >= 1 && p.Hops <= 4 && p.HubDegree >= 1 && p.Passages >= 0 && p.Phrases >= 0 && p.Damping > 0 && p.Damping < 1 && p.PassageW >= 0
}

// Documents fetches documents by ID (retrieval.Index satisfies it).
type Documents interface {
	Documents(ctx context.Context, ids []string) ([]retrieval.Document, error)
}

// Channel is the channel over a text graph.
type Channel struct {
	Store  textgraph.Store // nil: the channel adds nothing and says so
	Linker kg.Graph        // finds the phrases Q names (textgraph.QuestionKeys)
	Docs   Documents
	Options
}

// Options are a run's settings: the walk's, the documents it returns (K)
// and the request's filter.
type Options struct {
	Params
	K      int
	Filter retrieval.Filter
}

// Validate checks the options, naming the request option each comes from.
func (o Options) Validate() error {
	if err := errs.IntIn("text_graph_k", o.K, 1, 500); err != nil {
		return err
	}
	if !o.Valid() {
		return &errs.Error{Code: errs.Invalid, Field: "text_graph", Message: "text_graph: the walk's settings are out of range"}
	}
	return nil
}

// Output is the channel's documents, best first, and what it says of each.
type Output struct {
	Hits []retrieval.Hit
	Docs map[string]api.TextHit
}

// Run is the channel's stages for q. A store failure leaves the output
// empty and names a fallback; only a done context and the walk's own
// errors fail the run.
func (c Channel) Run(ctx context.Context, q chanio.Query, tr chanio.Trace) (Output, error) {
	o := c.Options
	if c.Store == nil {
		tr.Fallback("text_graph_unavailable", "no text graph is configured (textgraph.extractor): the text channel adds nothing")
		return Output{}, nil
	}
	seeds, err := c.seeds(ctx, q, o.Params)
	if err != nil {
		return failed(ctx, tr, "finding the text graph's seeds", err)
	}
	if len(seeds) == 0 {
		tr.Fallback("text_graph_no_seeds", "nothing in the query or the search's passages is in the text graph: the text channel adds nothing")
		return Output{}, nil
	}
	keys := make([]string, len(seeds))
	for i, s := range seeds {
		keys[i] = s.Key
	}
	sg, err := c.Store.Neighbourhood(ctx, keys, textgraph.Params{Hops: o.Hops, HubDegree: o.HubDegree})
	if err != nil {
		return failed(ctx, tr, "reading the seeds' neighbourhood", err)
	}
	ranked, err := textgraph.Rank(ctx, sg, seeds, textgraph.RankParams{Damping: o.Damping, MaxIterations: 100, Tolerance: 1e-9})
	if err != nil {
		return Output{}, err
	}
	out, err := c.documents(ctx, ranked, o)
	if err != nil {
		return failed(ctx, tr, "fetching the text graph's documents", err)
	}
	return out, nil
}

// seeds are the walk's restarts: Q's linked entities (weight: the link's
// confidence, 1 for an exact link) and the phrase and entity nodes Q names
// (weight 1) or resembles (weight: the cosine), each divided by the
// passages that hold it, as HippoRAG 2 weighs a phrase by its specificity;
// and the first Passages hits, PassageW x their min-max normalised scores.
func (c Channel) seeds(ctx context.Context, q chanio.Query, p Params) ([]textgraph.Seed, error) {
	keys, err := textgraph.QuestionKeys(ctx, c.Linker, q.Text)
	if err != nil {
		return nil, err
	}
	why := map[string]string{}
	for _, k := range keys {
		why[k] = "question phrase"
	}
	conf := map[string]float64{}
	for _, m := range q.Mentions {
		k := textgraph.EntityKey(m.QID)
		if _, ok := why[k]; !ok {
			keys = append(keys, k)
		}
		why[k] = "question entity"
		conf[k] = max(conf[k], m.Confidence)
	}
	matches, err := c.Store.Match(ctx, keys, q.Vector, p.Phrases, p.PhraseMin)
	if err != nil {
		return nil, err
	}
	var seeds []textgraph.Seed
	for _, m := range matches {
		w, reason := m.Score, why[m.Key]
		if reason == "" {
			reason = "similar phrase"
		}
		if c := conf[m.Key]; c > 0 {
			w = c
		}
		seeds = append(seeds, textgraph.Seed{Key: m.Key, W: w / float64(max(m.Passages, 1)), Why: reason})
	}
	hits := q.Hits[:min(len(q.Hits), p.Passages)]
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, h := range hits {
		lo, hi = min(lo, h.Score), max(hi, h.Score)
	}
	for _, h := range hits {
		s := 1.0
		if hi > lo {
			s = (h.Score - lo) / (hi - lo)
		}
		if w := p.PassageW * s; w > 0 {
			seeds = append(seeds, textgraph.Seed{Key: textgraph.PassageKey(h.Doc.ID), W: w, Why: "search passage"})
		}
	}
	return seeds, nil
}

// documents are the K best passages that pass the filter, fetched, each
// with its score, rank and path.
func (c Channel) documents(ctx context.Context, ranked []textgraph.Ranked, o Options) (Output, error) {
	keep := o.Filter.Matcher()
	k := o.K
	// Fetched in one call, with room for those the filter drops.
	want := ranked[:min(len(ranked), k)]
	if !o.Filter.Empty() {
		want = ranked
	}
	ids := make([]string, len(want))
	for i, x := range want {
		ids[i] = x.Doc
	}
	docs, err := c.Docs.Documents(ctx, ids)
	if err != nil {
		return Output{}, err
	}
	byID := make(map[string]retrieval.Document, len(docs))
	for _, d := range docs {
		byID[d.ID] = d
	}
	out := Output{Docs: map[string]api.TextHit{}}
	for _, x := range want {
		d, ok := byID[x.Doc]
		if !ok || !keep(d) {
			continue
		}
		if len(out.Hits) == k {
			break
		}
		th := api.TextHit{Score: x.Score, Rank: len(out.Hits) + 1, Path: textgraph.PathText(x), Hops: max(len(x.Path)-1, 0)}
		if x.Seed.Key != "" {
			th.Seed = x.Seed.Key + " (" + x.Seed.Why + ")"
		}
		out.Docs[d.ID] = th
		out.Hits = append(out.Hits, retrieval.Hit{Doc: d, Score: x.Score, Explain: fmt.Sprintf("text graph: %s (ppr %.4g)", th.Path, x.Score)})
	}
	if len(out.Hits) > 0 {
		top := out.Hits[0].Score
		for id, th := range out.Docs {
			if top > 0 {
				th.Norm = th.Score / top
			}
			out.Docs[id] = th
		}
	}
	return out, nil
}

// failed is the channel after a backend failure: empty, with the fallback
// in the trace; a done context is the run's error.
func failed(ctx context.Context, tr chanio.Trace, what string, err error) (Output, error) {
	if ctx.Err() != nil {
		return Output{}, ctx.Err()
	}
	tr.Fallback("text_graph_unavailable", what+" failed, the text channel adds nothing: "+err.Error())
	return Output{}, nil
}
