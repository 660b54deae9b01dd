package pipeline

import "github.com/dmar-kg/dmar/internal/errs"

// Experiments are the knobs of ideas tried on kgqa and left out of the
// method (docs/method.md). They were request options; now only dmar eval's
// variant systems reach them (internal/eval), so that every option a
// request names is part of the product. Zero values: off.
type Experiments struct {
	// GraphFanout is the weight of the mean over a path's steps of ln(n), n
	// the entities the step's relation reaches from its node in that
	// direction, subtracted from its document's graph score (kgfanout.go).
	GraphFanout float64 `json:"graph_fanout,omitempty"`
	// Utility is the structural game's F: paper ("" means paper), or path,
	// which adds PathWeight x the question relevance of the best KG path
	// from a coalition's roots to D's entities (structural.go).
	Utility string `json:"utility,omitempty"`
	// PathWeight is c in F = (1-c)*paper + c*rel (utility path); 0 means
	// unset: DefaultPathWeight.
	PathWeight float64 `json:"path_weight,omitempty"`
	// PathPrior is the weight of the learned question -> relation prior
	// (Config.RelPrior) added to each step's cosine in path relevance.
	PathPrior float64 `json:"path_prior,omitempty"`
	// ReformRank ranks the bridge entities and relations the built-in
	// reformulator adds to Q: shapley ("" means shapley: by the anchors'
	// Shapley values) or question (by the question relevance of the KG path
	// from a query entity to the bridge, and of each relation;
	// reformrank.go).
	ReformRank string `json:"reform_rank,omitempty"`
	// ReformBridges and ReformRelations cap the bridge entities and the
	// relations added to Q; 0 means the ranking's default (ReformCaps).
	ReformBridges   int `json:"reform_bridges,omitempty"`
	ReformRelations int `json:"reform_relations,omitempty"`
	// ReformPhrases is how many names (runs of capitalised words, dates,
	// quoted titles: textgraph.HeuristicPhrases) of each anchor's text that
	// Q does not already say the built-in reformulator adds to Q, in text
	// order (reform.go): the bridge a multi-hop question's next passage
	// names, where the KG links none.
	ReformPhrases int `json:"reform_phrases,omitempty"`
	// NoOwnPages leaves the query entities' pages that nothing else found
	// out of the learned ranker's pool (an ablation; finalrank.go).
	NoOwnPages bool `json:"no_own_pages,omitempty"`
}

// RemovedOptions are the request options that were removed, each with
// why: a request that names one is refused with that reason
// (RemovedOption). Their ideas stay reachable as Experiments.
var RemovedOptions = map[string]string{
	"graph_fanout":     "the fan-out normaliser did not help dmar significantly on kgqa train",
	"utility":          "the question-conditioned utility changed no ranking for the better on top of dmar",
	"path_weight":      "it weighed the question-conditioned utility, which changed no ranking for the better on top of dmar",
	"path_prior":       "the learned relation prior lowered the graph channel's recall on kgqa dev",
	"reform_rank":      "question-ranked reformulation changed nothing dmar's metrics see on kgqa train",
	"reform_bridges":   "it capped question-ranked reformulation, which changed nothing dmar's metrics see on kgqa train",
	"reform_relations": "it capped question-ranked reformulation, which changed nothing dmar's metrics see on kgqa train",
}

// RemovedOption is err, or, when err refuses a field that names a removed
// option (a decoder's unknown field), a 400 that says it was removed and
// why.
func RemovedOption(err error) error {
	e, ok := errs.As(err)
	if !ok || e.Field == "" {
		return err
	}
	why, removed := RemovedOptions[e.Field]
	if !removed {
		return err
	}
	return errs.Field(e.Field, "was removed: %s (docs/method.md; dmar eval's variant systems still run it)", why)
}

// The reformulator's default caps on the bridge entities and relations it
// adds to Q: the method's for reform_rank shapley, and shorter ones for
// reform_rank question, chosen on kgqa train (docs/method.md), so that Q'
// stays close to Q and the second search is not diluted.
const (
	DefaultShapleyBridges    = 8
	DefaultShapleyRelations  = 4
	DefaultQuestionBridges   = 3
	DefaultQuestionRelations = 1
)

// ReformCaps are the caps on the bridges and relations added to Q the
// request runs with: ReformBridges and ReformRelations, or their ranking's
// defaults where unset (0).
func (e Experiments) ReformCaps() (bridges, relations int) {
	bridges, relations = DefaultShapleyBridges, DefaultShapleyRelations
	if e.ReformRank == "question" {
		bridges, relations = DefaultQuestionBridges, DefaultQuestionRelations
	}
	if e.ReformBridges > 0 {
		bridges = e.ReformBridges
	}
	if e.ReformRelations > 0 {
		relations = e.ReformRelations
	}
	return bridges, relations
}

// DefaultPathWeight is PathWeight's default (it matters with utility path
// only): what an unset (0) PathWeight means.
const DefaultPathWeight = 0.75

// EffectivePathWeight is the weight of the path-relevance term the request
// runs with: PathWeight, or DefaultPathWeight when it is unset (0).
func (e Experiments) EffectivePathWeight() float64 {
	if e.PathWeight == 0 {
		return DefaultPathWeight
	}
	return e.PathWeight
}

// validate checks each experiment's range, named as the option it was.
func (e Experiments) validate() error {
	for _, err := range []error{
		within("graph_fanout", e.GraphFanout, 0, 1),
		oneOf("utility", e.Utility, "", "paper", "path"),
		unit("path_weight", e.PathWeight),
		within("path_prior", e.PathPrior, 0, 5),
		oneOf("reform_rank", e.ReformRank, "", "shapley", "question"),
		intIn("reform_bridges", e.ReformBridges, 0, 50),
		intIn("reform_relations", e.ReformRelations, 0, 20),
		intIn("reform_phrases", e.ReformPhrases, 0, 20),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}
