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

// relationQueryVariant parses kg-walk-mask and dmar-mask, and either with
// -fanX: dmar's question-aware options (or its graph channel alone) whose
// relation cosines read enc(Q without its linked mentions).
func relationQueryVariant(name string, questionAware pipeline.Options) (kind string, o pipeline.Options, what string, ok bool) {
	for _, k := range []string{"kg-walk", "dmar"} {
		rest, found := strings.CutPrefix(name, k+"-mask")
		if !found {
			continue
		}
		o = questionAware
		o.GraphRelationQuery = "masked"
		what = k + " whose graph channel matches relations against Q without its linked mentions"
		if rest != "" {
			w, err := strconv.ParseFloat(strings.TrimPrefix(rest, "-fan"), 64)
			if err != nil || !strings.HasPrefix(rest, "-fan") {
				return "", o, "", false
			}
			o.GraphFanout = w
			what += fmt.Sprintf(", graph_fanout %.3g", w)
		}
		return k, o, what, true
	}
	return "", o, "", false
}
