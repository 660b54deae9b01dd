package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

// rankingVariant parses the graph channel's ranking variants, for choosing
// them on kgqa train: kg-walk or dmar (dmar's question-aware options, or its
// graph channel alone), then tokens, the first mask: mask
// (graph_relation_query masked: relation cosines read enc(Q without its
// linked mentions)), dir (directed relation texts), wX (graph_weight X),
// e.g. kg-walk-mask-dir-w0.4. (The fan-out normaliser, fanX, and the
// question-conditioned utility, util, were measured without a gain and
// removed: docs/method.md.)
func rankingVariant(name string, questionAware pipeline.Options) (kind string, o pipeline.Options, what string, ok bool) {
	kind, rest, found := "kg-walk", "", false
	if rest, found = strings.CutPrefix(name, "kg-walk-"); !found {
		kind = "dmar"
		rest, found = strings.CutPrefix(name, "dmar-")
	}
	if !found || !strings.HasPrefix(rest, "mask") {
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
		default:
			return "", o, "", false
		}
	}
	return kind, o, kind + " with " + strings.Join(parts, ", "), true
}
