package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

// fanoutVariant parses dmar-fanX and kg-walk-fanX: dmar's question-aware
// options (or its graph channel alone) with graph_fanout X, for choosing
// the weight on kgqa train.
func fanoutVariant(name string, questionAware pipeline.Options) (kind string, o pipeline.Options, what string, ok bool) {
	for _, k := range []string{"kg-walk", "dmar"} {
		v, found := strings.CutPrefix(name, k+"-fan")
		if !found {
			continue
		}
		w, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", o, "", false
		}
		o = questionAware
		o.GraphFanout = w
		return k, o, fmt.Sprintf("%s with graph_fanout %.3g (a one-hop path loses that x ln(the entities its relation reaches from its root))", k, w), true
	}
	return "", o, "", false
}

// relationQueryVariant parses kg-walk-mask and dmar-mask, then any of
// -fanX (graph_fanout) and -dir (directed relation texts): dmar's
// question-aware options (or its graph channel alone) whose relation cosines
// read enc(Q without its linked mentions).
func relationQueryVariant(name string, questionAware pipeline.Options) (kind string, o pipeline.Options, what string, ok bool) {
	for _, k := range []string{"kg-walk", "dmar"} {
		rest, found := strings.CutPrefix(name, k+"-mask")
		if !found || (rest != "" && rest[0] != '-') {
			continue
		}
		o = questionAware
		o.GraphRelationQuery = "masked"
		what = k + " whose graph channel matches relations against Q without its linked mentions"
		for _, t := range strings.Split(strings.TrimPrefix(rest, "-"), "-") {
			switch {
			case t == "":
			case t == "dir":
				o.GraphRelations = "directed"
				what += ", directed relation texts"
			case strings.HasPrefix(t, "fan"):
				w, err := strconv.ParseFloat(t[3:], 64)
				if err != nil {
					return "", o, "", false
				}
				o.GraphFanout = w
				what += fmt.Sprintf(", graph_fanout %.3g", w)
			default:
				return "", o, "", false
			}
		}
		return k, o, what, true
	}
	return "", o, "", false
}
