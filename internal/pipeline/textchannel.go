package pipeline

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/textgraph"
)

// The text graph channel (text_graph; docs/textgraph.md): passages ranked by
// personalized PageRank over the graph built from the corpus's text
// (internal/textgraph: passages, their phrases and entities, synonym and
// KG edges), seeded with Q's linked entities, the phrases Q names or
// resembles, and the stage-1 search's best passages. Off by default (the
// learned ranker does not read it yet). Its stages, each a function from
// the previous one's value to its own:
//
//	seeds          []textgraph.Seed     Q's entities, phrases and top passages (textSeeds)
//	neighbourhood  textgraph.Subgraph   the seeds' neighbourhood, one round trip
//	rank           []textgraph.Ranked   personalized PageRank over it, with each passage's best path
//	documents      textChannel          the text_graph_k best passages, fetched, with their paths

// TextParams are the text channel's settings that no request sets: dmar
// eval's ppr variants sweep them (TextDefaults).
type TextParams struct {
	Hops      int     // the neighbourhood's radius from the seeds
	HubDegree int     // a node with more edges is not expanded
	Passages  int     // the stage-1 (or dense) hits seeded
	PassageW  float64 // a seeded passage's weight: PassageW x its min-max normalised search score
	Phrases   int     // the phrases seeded by similarity to enc(Q)
	PhraseMin float64 // the least cosine of such a phrase
	Damping   float64
}

// TextDefaults are HippoRAG 2's damping and passage weight, and the
// neighbourhood and seed sizes chosen on the halves named in
// docs/textgraph.md.
func TextDefaults() TextParams {
	return TextParams{Hops: 3, HubDegree: 50, Passages: 30, PassageW: 0.05, Phrases: 5, PhraseMin: 0.6, Damping: 0.5}
}

// textChannel is the channel's output for one request: its documents,
// best first, and what it says of each.
type textChannel struct {
	hits []retrieval.Hit
	docs map[string]TextHit
}

// textChannel runs the channel for in, from Q's linked entities and the
// stage-1 hits; empty when the option is off.
func (r request) textChannel(ctx context.Context, in channelQuery) (textChannel, error) {
	if r.opts.TextGraph == 0 {
		return textChannel{}, nil
	}
	defer r.trace.timed("text_graph", time.Now())
	return r.textWalk(ctx, in.qvec, in.mentions, in.hits, true)
}

// textWalk is the channel's stages: seeds from the entities (withEntities:
// Q's linked mentions; the peers' recipe, ppr, seeds none), the phrases Q
// names or resembles and the passages of hits; then the neighbourhood, the
// walk and the documents. A store failure leaves it empty and says so.
func (r request) textWalk(ctx context.Context, qvec []float32, mentions []kg.Mention, hits []retrieval.Hit, withEntities bool) (textChannel, error) {
	st := r.p.cfg.TextGraph
	if st == nil {
		r.trace.fallback("text_graph_unavailable", "no text graph is configured (textgraph.extractor): the text channel adds nothing")
		return textChannel{}, nil
	}
	tp := r.opts.TextParams
	seeds, err := r.textSeeds(ctx, qvec, mentions, hits, withEntities)
	if err != nil {
		return r.textFailed(ctx, "finding the text graph's seeds", err)
	}
	if len(seeds) == 0 {
		r.trace.fallback("text_graph_no_seeds", "nothing in the query or the search's passages is in the text graph: the text channel adds nothing")
		return textChannel{}, nil
	}
	keys := make([]string, len(seeds))
	for i, s := range seeds {
		keys[i] = s.Key
	}
	sg, err := st.Neighbourhood(ctx, keys, textgraph.Params{Hops: tp.Hops, HubDegree: tp.HubDegree})
	if err != nil {
		return r.textFailed(ctx, "reading the seeds' neighbourhood", err)
	}
	ranked, err := textgraph.Rank(ctx, sg, seeds, textgraph.RankParams{Damping: tp.Damping, MaxIterations: 100, Tolerance: 1e-9})
	if err != nil {
		return textChannel{}, err
	}
	ch, err := r.textDocuments(ctx, ranked)
	if err != nil {
		return r.textFailed(ctx, "fetching the text graph's documents", err)
	}
	return ch, nil
}

// textSeeds are the walk's restarts: Q's linked entities (weight: the
// link's confidence, 1 for an exact link) and the phrase and entity nodes
// Q names (weight 1) or resembles (weight: the cosine), each divided by the
// passages that hold it, as HippoRAG 2 weighs a phrase by its specificity;
// and the first Passages hits, PassageW x their min-max normalised scores.
func (r request) textSeeds(ctx context.Context, qvec []float32, mentions []kg.Mention, hits []retrieval.Hit, withEntities bool) ([]textgraph.Seed, error) {
	tp := r.opts.TextParams
	keys, err := textgraph.QuestionKeys(ctx, r.p.cfg.Graph, r.query)
	if err != nil {
		return nil, err
	}
	why := map[string]string{}
	for _, k := range keys {
		why[k] = "question phrase"
	}
	conf := map[string]float64{}
	if withEntities {
		for _, m := range mentions {
			k := textgraph.EntityKey(m.QID)
			if _, ok := why[k]; !ok {
				keys = append(keys, k)
			}
			why[k] = "question entity"
			conf[k] = max(conf[k], m.Confidence)
		}
	}
	matches, err := r.p.cfg.TextGraph.Match(ctx, keys, qvec, tp.Phrases, tp.PhraseMin)
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
	hits = hits[:min(len(hits), tp.Passages)]
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, h := range hits {
		lo, hi = min(lo, h.Score), max(hi, h.Score)
	}
	for _, h := range hits {
		s := 1.0
		if hi > lo {
			s = (h.Score - lo) / (hi - lo)
		}
		if w := tp.PassageW * s; w > 0 {
			seeds = append(seeds, textgraph.Seed{Key: textgraph.PassageKey(h.Doc.ID), W: w, Why: "search passage"})
		}
	}
	return seeds, nil
}

// textDocuments are the text_graph_k best passages that pass the request's
// filter, fetched, each with its score, rank and path.
func (r request) textDocuments(ctx context.Context, ranked []textgraph.Ranked) (textChannel, error) {
	keep := filterOf(r.opts.Filter)
	k := r.opts.TextGraphK
	// Fetched in one call, with room for those the filter drops.
	want := ranked[:min(len(ranked), k)]
	if !r.opts.Filter.Empty() {
		want = ranked
	}
	ids := make([]string, len(want))
	for i, x := range want {
		ids[i] = x.Doc
	}
	docs, err := r.p.cfg.Index.Documents(ctx, ids)
	if err != nil {
		return textChannel{}, err
	}
	byID := make(map[string]retrieval.Document, len(docs))
	for _, d := range docs {
		byID[d.ID] = d
	}
	ch := textChannel{docs: map[string]TextHit{}}
	for _, x := range want {
		d, ok := byID[x.Doc]
		if !ok || !keep(d) {
			continue
		}
		if len(ch.hits) == k {
			break
		}
		th := TextHit{Score: x.Score, Rank: len(ch.hits) + 1, Path: textgraph.PathText(x), Hops: max(len(x.Path)-1, 0)}
		if x.Seed.Key != "" {
			th.Seed = x.Seed.Key + " (" + x.Seed.Why + ")"
		}
		ch.docs[d.ID] = th
		ch.hits = append(ch.hits, retrieval.Hit{Doc: d, Score: x.Score, Explain: fmt.Sprintf("text graph: %s (ppr %.4g)", th.Path, x.Score)})
	}
	if len(ch.hits) > 0 {
		top := ch.hits[0].Score
		for id, th := range ch.docs {
			if top > 0 {
				th.Norm = th.Score / top
			}
			ch.docs[id] = th
		}
	}
	return ch, nil
}

// textFailed is the channel after a backend failure: empty, with the
// fallback in the trace; a done context is the request's error.
func (r request) textFailed(ctx context.Context, what string, err error) (textChannel, error) {
	if ctx.Err() != nil {
		return textChannel{}, ctx.Err()
	}
	r.trace.fallback("text_graph_unavailable", what+" failed, the text channel adds nothing: "+err.Error())
	return textChannel{}, nil
}
