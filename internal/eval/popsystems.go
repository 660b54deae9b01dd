package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

// popVariant parses dmar-popX and kg-walk-popX: dmar's question-aware
// options (or its graph channel alone) with graph_popularity X, for
// choosing the weight on kgqa train.
func popVariant(name string, questionAware pipeline.Options) (kind string, o pipeline.Options, what string, ok bool) {
	for _, k := range []string{"kg-walk", "dmar"} {
		v, found := strings.CutPrefix(name, k+"-pop")
		if !found {
			continue
		}
		w, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", o, "", false
		}
		o = questionAware
		o.GraphPopularity = w
		return k, o, fmt.Sprintf("%s with graph_popularity %.3g (ln(1 + degree) of a reached entity in its graph score)", k, w), true
	}
	return "", o, "", false
}

// stage2VectorVariant is dmar-s2q: dmar searching stage 2 with enc(Q)
// beside Q' (stage2_vector question).
func stage2VectorVariant(name string, questionAware pipeline.Options) (pipeline.Options, string, bool) {
	if name != "dmar-s2q" {
		return questionAware, "", false
	}
	o := questionAware
	o.Stage2Vector = "question"
	return o, "dmar whose stage 2 searches with enc(Q) beside Q' (no second encoder call)", true
}
