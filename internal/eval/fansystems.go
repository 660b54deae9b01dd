package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

// rankingVariant parses the graph channel's ranking variants, for choosing
// them on kgqa train: kg-walk or dmar (dmar's question-aware options, or its
// graph channel alone), then tokens, the first mask, fanX or util: mask
// (graph_relation_query masked: relation cosines read enc(Q without its
// linked mentions)), fanX (graph_fanout X), dir (directed relation texts),
// wX (graph_weight X), util or utilC (utility path, path_weight C), e.g.
// dmar-fan0.04, kg-walk-mask-fan0.03-w0.4, dmar-util0.25.
func rankingVariant(name string, questionAware pipeline.Options) (kind string, o pipeline.Options, what string, ok bool) {
	kind, rest, found := "kg-walk", "", false
	if rest, found = strings.CutPrefix(name, "kg-walk-"); !found {
		kind = "dmar"
		rest, found = strings.CutPrefix(name, "dmar-")
	}
	if !found || !(strings.HasPrefix(rest, "mask") || strings.HasPrefix(rest, "fan") || strings.HasPrefix(rest, "util")) {
		return "", o, "", false
	}
	o = questionAware
	var parts []string
	for _, t := range strings.Split(rest, "-") {
		switch {
		case t == "mask":
			o.GraphRelationQuery = "masked"
			parts = append(parts, "relation cosines read Q without its linked mentions")
		case t == "dir":
			o.GraphRelations = "directed"
			parts = append(parts, "directed relation texts")
		case len(t) > 1 && t[0] == 'w':
			w, err := strconv.ParseFloat(t[1:], 64)
			if err != nil {
				return "", o, "", false
			}
			o.GraphWeight = w
			parts = append(parts, fmt.Sprintf("graph_weight %.3g", w))
		case strings.HasPrefix(t, "util"):
			o.Experiments.Utility = "path"
			if t != "util" {
				c, err := strconv.ParseFloat(t[4:], 64)
				if err != nil {
					return "", o, "", false
				}
				o.Experiments.PathWeight = c
			}
			parts = append(parts, fmt.Sprintf("the question-conditioned utility (utility path, path_weight %.3g)", o.Experiments.EffectivePathWeight()))
		case strings.HasPrefix(t, "fan"):
			w, err := strconv.ParseFloat(t[3:], 64)
			if err != nil {
				return "", o, "", false
			}
			o.Experiments.GraphFanout = w
			parts = append(parts, fmt.Sprintf("graph_fanout %.3g (a path loses that x the mean ln(entities its relations reach))", w))
		default:
			return "", o, "", false
		}
	}
	return kind, o, kind + " with " + strings.Join(parts, ", "), true
}
