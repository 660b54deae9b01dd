package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

// ReformSystemNames are the question-ranked reformulation systems, run
// only when named: dmar and dmar-paper with the bridges and relations added
// to Q ranked by question relevance (-qreform) or by the Shapley values
// (-sreform, the method's ranking), each with optional caps -bN (bridges)
// and -rN (relations), e.g. dmar-qreform-b2-r1, dmar-paper-sreform-b3; and
// dmar-full-namesN, dmar-full whose reformulator adds the first N names of
// each anchor's text that Q does not say (docs/textgraph.md).
var ReformSystemNames = []string{"dmar-qreform", "dmar-sreform", "dmar-paper-qreform", "dmar-paper-sreform", "dmar-full-namesN"}

// reformVariant parses a reformulation system: its base options are
// questionAware (dmar-...) or paper (dmar-paper-...).
func reformVariant(name string, paper, questionAware pipeline.Options) (pipeline.Options, string, bool) {
	o, rest := questionAware, name
	if r, ok := strings.CutPrefix(name, "dmar-full-names"); ok {
		v, err := strconv.Atoi(r)
		if err != nil || v <= 0 || v > 20 {
			return o, "", false
		}
		o = o.WithPaperStages()
		o.Experiments.ReformPhrases = v
		return o, fmt.Sprintf("dmar-full whose built-in reformulator adds the first %d names of each anchor that Q does not say", v), true
	}
	if r, ok := strings.CutPrefix(name, "dmar-paper-"); ok {
		o, rest = paper, r
	} else if r, ok := strings.CutPrefix(name, "dmar-"); ok {
		rest = r
	} else {
		return o, "", false
	}
	kind, caps, _ := strings.Cut(rest, "-")
	switch kind {
	case "qreform":
		o.Experiments.ReformRank = "question"
	case "sreform":
		o.Experiments.ReformRank = "shapley"
	default:
		return o, "", false
	}
	if caps != "" {
		for _, t := range strings.Split(caps, "-") {
			if len(t) < 2 || (t[0] != 'b' && t[0] != 'r') {
				return o, "", false
			}
			v, err := strconv.Atoi(t[1:])
			if err != nil {
				return o, "", false
			}
			if t[0] == 'b' {
				o.Experiments.ReformBridges = v
			} else {
				o.Experiments.ReformRelations = v
			}
		}
	}
	b, r := o.Experiments.ReformCaps()
	return o, fmt.Sprintf("built-in reformulation ranked by %s relevance, at most %d bridge entities and %d relations added to Q", map[string]string{"question": "question", "shapley": "Shapley"}[o.Experiments.ReformRank], b, r), true
}
