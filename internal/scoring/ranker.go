package scoring

import (
	"context"
	"math"
)

// RankInput is what the learned ranker sees of one candidate of the final
// pool (option final_rank learned): how well the text matches Q, whether
// and how well the graph reached it, whether it is the page of an entity Q
// names, and, the same for every candidate of a request, how sure the
// linking is, how well any relation matched Q, how much the graph agrees
// with the text search, and whether Q is a question or a claim. From these
// it decides per request how much the graph's evidence weighs, so that the
// graph adds to the text retrieval rather than replacing it.
type RankInput struct {
	// Text: cos(enc(Q), enc(D)), its z-score over the pool and its gap to
	// the pool's best; the stage-1 search (hybrid over Q) and stage-2
	// search (over Q') scores and reciprocal ranks, 0 when D was not a hit.
	Semantic, ZSemantic, SemanticGap float64
	Search1, InvRank1                float64
	Search2, InvRank2                float64
	// Graph: whether the channel reached D, its graph score, the path's
	// question relevance, its reciprocal rank in the channel, and whether
	// the path has two hops (all 0 when not reached).
	Reached                       bool
	Graph, PathRelevance, InvRank float64
	TwoHop                        bool
	// Own is the link confidence of the query entity whose page D is (its
	// ID is the entity's QID); 0 when D is no query entity's page.
	Own float64
	// ZStructural is DMAR's structural score's z over the pool (0 with the
	// structural path off).
	ZStructural float64

	// Request-level: the best link confidence and the number of linked
	// entities; the best path relevance the channel found and how many
	// documents it reached; the share of the channel's ten best documents
	// among the stage-1 search's twenty best; the best stage-1 cosine; the
	// best stage-1 reciprocal rank of a query entity's page; whether Q is
	// phrased as a question (a wh-word or a question mark).
	LinkConfMax      float64
	Linked           int
	ChannelBestRel   float64
	ChannelDocs      int
	Agreement        float64
	TextBestSemantic float64
	OwnInvRank1      float64
	Question         bool
}

// RankFeatures name RankInput.Vector's columns, in order: the contract
// between the exported training rows (dmar gate ranker), the model file
// (its "features" metadata) and the runtime.
var RankFeatures = []string{
	"sem", "z_sem", "sem_gap", "search1", "inv_rank1", "search2", "inv_rank2",
	"reached", "graph", "path_relevance", "inv_rank_graph", "two_hop", "own", "z_ent",
	"link_conf_max", "log1p_linked", "channel_best_rel", "log1p_channel_docs", "agreement",
	"text_best_sem", "own_inv_rank1", "question",
}

// Vector is x as the model's input row (RankFeatures order).
func (x RankInput) Vector() []float32 {
	return []float32{
		float32(x.Semantic), float32(x.ZSemantic), float32(x.SemanticGap), float32(x.Search1), float32(x.InvRank1), float32(x.Search2), float32(x.InvRank2),
		b2f(x.Reached), float32(x.Graph), float32(x.PathRelevance), float32(x.InvRank), b2f(x.TwoHop), float32(x.Own), float32(x.ZStructural),
		float32(x.LinkConfMax), float32(math.Log1p(float64(x.Linked))), float32(x.ChannelBestRel), float32(math.Log1p(float64(x.ChannelDocs))), float32(x.Agreement),
		float32(x.TextBestSemantic), float32(x.OwnInvRank1), b2f(x.Question),
	}
}

// Ranker scores the final pool's candidates of one request; a higher score
// ranks first. An error means no scores (the request fails as on any model
// failure); ctx is honoured between model calls.
type Ranker interface {
	Scores(ctx context.Context, docs []RankInput) ([]float64, error)
	Version() string
}
