package scoring

import (
	"context"
	"math"
)

// Evidence is what the evidence-aware gate sees of one candidate document:
// its two z-scores and raw scores, and how strong the grounds of the
// structural score are (how confidently Q was linked, to how many and how
// generic entities, whether the graph channel reached the document). The
// query-level fields are the same for every candidate of a request.
type Evidence struct {
	ZSemantic, ZStructural float64 // z(sem), z(ent) over the stage's candidates
	Semantic, Structural   float64 // cos(enc(Q), enc(D)); ent(D)
	// LinkConfMean and LinkConfMin are over the query entities that have a
	// subgraph (G_Q's roots): the context linker's confidence per mention
	// (1 for a linker that gives none).
	LinkConfMean, LinkConfMin float64
	Linked                    int     // |G_Q|
	QueryHubShare             float64 // share of G_Q's roots that are hubs (degree above hub_degree)
	// PathRelevance is the question relevance of the graph channel's path to
	// D (0 when the channel did not reach D); Reached says it did.
	PathRelevance float64
	Reached       bool
	DocEntities   int  // entities linked in D
	DocHub        bool // one of D's entities is a hub
	// EntNonzeroShare is the share of the stage's candidates with ent > 0:
	// how selective the structural signal is.
	EntNonzeroShare float64
}

// EvidenceFeatures name Evidence.Vector's columns, in order: the contract
// between the exported training rows (dmar gate evidence), the model file
// (its "features" metadata) and the runtime.
var EvidenceFeatures = []string{
	"z_sem", "z_ent", "sem", "ent",
	"link_conf_mean", "link_conf_min", "log1p_linked", "query_hub_share",
	"path_relevance", "reached", "log1p_doc_entities", "doc_hub", "ent_nonzero_share",
}

// Vector is e as the model's input row (EvidenceFeatures order). Counts
// enter as log(1+n): the difference between 1 and 2 entities matters more
// than between 11 and 12.
func (e Evidence) Vector() []float32 {
	return []float32{
		float32(e.ZSemantic), float32(e.ZStructural), float32(e.Semantic), float32(e.Structural),
		float32(e.LinkConfMean), float32(e.LinkConfMin), float32(math.Log1p(float64(e.Linked))), float32(e.QueryHubShare),
		float32(e.PathRelevance), b2f(e.Reached), float32(math.Log1p(float64(e.DocEntities))), b2f(e.DocHub), float32(e.EntNonzeroShare),
	}
}

func b2f(b bool) float32 {
	if b {
		return 1
	}
	return 0
}

// EvidenceGate returns per-document fusion weights [semantic, structural],
// each pair summing to 1, from each document's Evidence. An error means no
// weights (the request fails as on any model failure); ctx is honoured
// between model calls.
type EvidenceGate interface {
	EvidenceWeights(ctx context.Context, docs []Evidence) ([][2]float64, error)
	Version() string
}
