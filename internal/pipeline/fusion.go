package pipeline

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
}

// DefaultRRFK is reciprocal-rank fusion's constant in the literature.
const DefaultRRFK = 60

func fusionDefaults() FusionOptions { return FusionOptions{RRFK: DefaultRRFK} }

func (o FusionOptions) validate() error { return intIn("rrf_k", o.RRFK, 1, 10_000) }
