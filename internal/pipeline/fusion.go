package pipeline

import (
	"errors"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/pipeline/kgchan"
	"github.com/dmar-kg/dmar/internal/pipeline/textchan"
)

// FusionOptions are how the final order fuses the channels' orders
// (finalrank.go): settings of the method, not of a request.
type FusionOptions struct {
	// RRFK is reciprocal-rank fusion's constant k (Cormack et al., 2009):
	// a document's share of a fused score is its weight/(k + its rank).
	// 60, the paper's; dmar eval's variants may sweep it.
	RRFK int `json:"-"`
	// NoOwnPages leaves the query entities' pages that neither search nor
	// a channel found out of the learned ranker's pool (dmar eval's
	// dmar-no-own-pages ablation).
	NoOwnPages bool `json:"-"`
	// KGRank is the KG channel's weight in the reciprocal-rank fusion of
	// the learned ranker's order with the channel's own (fuseKG); 0: the
	// ranker's scores stand. KGRankK is that fusion's constant: small, so
	// that the channel's first few documents count and its long tail of
	// documents reached through the same relation does not.
	KGRank  float64 `json:"-"`
	KGRankK int     `json:"-"`
}

// DefaultRRFK is reciprocal-rank fusion's constant in the literature.
const DefaultRRFK = 60

// DefaultKGRankK is fuseKG's constant where the KG channel's order is fused.
const DefaultKGRankK = 5

func fusionDefaults() FusionOptions { return FusionOptions{RRFK: DefaultRRFK, KGRankK: DefaultKGRankK} }

func (o FusionOptions) validate() error {
	return errors.Join(errs.IntIn("rrf_k", o.RRFK, 1, 10_000), errs.Within("kg_rank", o.KGRank, 0, 10), errs.IntIn("kg_rank_k", o.KGRankK, 1, 10_000))
}

// fusion is the fuse stage: it adds the channels' scores to the searches'
// candidates (fuse, in both scoring phases), and fuses the learned
// ranker's order with the text channel's (fuseText). It reads its own
// settings, taken from the options once, and the channels' outputs it is
// handed; nothing of the request.
type fusion struct {
	graphBoost float64 // graph_boost: the KG channel's weight
	textGraph  float64 // text_graph: the text channel's weight
	FusionOptions
}

// fusion is the fuse stage with o's settings.
func (o Options) fusion() fusion {
	return fusion{graphBoost: o.GraphBoost, textGraph: o.TextGraph, FusionOptions: o.FusionOptions}
}

// fuse adds the channels' scores to the fused scores of the documents they
// reached, and marks those documents: the KG channel's offset (kgOffset)
// and path in the breakdown; text_graph x the text channel's normalised
// score, its path in the breakdown.
func (f fusion) fuse(docs []Doc, ch channels) {
	if len(ch.kg.Paths) == 0 && len(ch.text.Docs) == 0 {
		return
	}
	for i := range docs {
		if gp, ok := ch.kg.Paths[docs[i].ID]; ok {
			g := gp
			docs[i].Breakdown.Source, docs[i].Breakdown.Graph = "kg", &g
			docs[i].Score += f.kgOffset(gp)
		}
		if th, ok := ch.text.Docs[docs[i].ID]; ok {
			t := th
			docs[i].Breakdown.Text = &t
			if docs[i].Breakdown.Source == "" {
				docs[i].Breakdown.Source = "text"
			}
			docs[i].Score += f.textGraph * th.Norm
		}
	}
}

// kgOffset is what the KG channel adds to a document's fused score:
// graph_boost x its graph score, which puts the entities' own pages first;
// a document reached through what it mentions gets its graph score once,
// not boosted: on a corpus of passages (MuSiQue) the boost would put every
// passage that mentions a reached entity above the searches' best.
func (f fusion) kgOffset(gp GraphPath) float64 {
	if gp.Bridge != nil {
		return gp.Score
	}
	return f.graphBoost * gp.Score
}

// offset is what fuse adds to document id's fused score.
func (f fusion) offset(ch channels, id string) float64 {
	o := 0.0
	if gp, ok := ch.kg.Paths[id]; ok {
		o += f.kgOffset(gp)
	}
	if th, ok := ch.text.Docs[id]; ok {
		o += f.textGraph * th.Norm
	}
	return o
}

// fuseKG is the final score where the ranker puts one of the KG channel's
// documents first: the reciprocal-rank fusion of the ranker's order and
// the channel's, 1/(k + rank by the ranker) + kg_rank/(k + rank in the
// channel), k FusionOptions.KGRankK. The ranker reads the channel's rank
// and score among its inputs, but it scores the whole pool at once, where
// the search's many candidates (near-copies, in a large corpus) can push
// the channel's second to fifth documents below five; the channel's own
// order keeps its best ones up. Where the ranker's best is not the
// channel's (a claim, a passage question: NQ's, FEVER's), the ranker has
// judged the channel and its scores stand, as they do without the
// channel's documents or at kg_rank 0.
func (f fusion) fuseKG(ch kgchan.Output, pool []poolDoc, learned []float64) []float64 {
	if len(ch.Hits) == 0 || f.KGRank == 0 || len(pool) == 0 {
		return learned
	}
	rank := make(map[string]int, len(ch.Hits))
	for i, h := range ch.Hits {
		if _, ok := rank[h.Doc.ID]; !ok {
			rank[h.Doc.ID] = i + 1
		}
	}
	if best := poolOrder(pool, learned)[0]; rank[pool[best].doc.ID] == 0 {
		return learned
	}
	return rrf(pool, learned, f.KGRankK, f.KGRank, func(id string) int { return rank[id] })
}

// rrf is the reciprocal-rank fusion of the order of scores over pool with a
// channel's order: 1/(k + rank by scores) + w/(k + rank in the channel),
// rankOf a document's 1-based rank in the channel (0: not there).
func rrf(pool []poolDoc, scores []float64, k int, w float64, rankOf func(id string) int) []float64 {
	out := make([]float64, len(pool))
	for n, i := range poolOrder(pool, scores) {
		out[i] = 1 / float64(k+n+1)
		if r := rankOf(pool[i].doc.ID); r > 0 {
			out[i] += w / float64(k+r)
		}
	}
	return out
}

// fuseText is the final score where the text graph channel reached
// documents: the reciprocal-rank fusion of the ranker's order and the
// channel's, 1/(k + rank by the ranker) + text_graph/(k + rank in the
// channel), k the fusion's constant (FusionOptions.RRFK). The ranker's
// inputs say nothing of the channel, and its scores and the channel's
// PageRank mass have no common scale, so the two orders are fused by rank.
// (A linear head on the ranker's score that read the channel's rank and
// score, fitted on the same tune halves, did worse: docs/textgraph.md.)
// Without the channel's documents, or at text_graph 0, the ranker's scores
// stand.
func (f fusion) fuseText(ch textchan.Output, pool []poolDoc, learned []float64) []float64 {
	if len(ch.Docs) == 0 || f.textGraph == 0 {
		return learned
	}
	return rrf(pool, learned, f.RRFK, f.textGraph, func(id string) int { return ch.Docs[id].Rank })
}
