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
	return weightVariant(name, "-pop", questionAware, func(o *pipeline.Options, w float64) string {
		o.GraphPopularity = w
		return fmt.Sprintf("graph_popularity %.3g (ln(1 + degree) of a reached entity in its graph score)", w)
	})
}

// weightVariant parses kg-walk and dmar followed by suffix and a number:
// dmar's question-aware options (or its graph channel alone) with the
// number set by set, which says what it set.
func weightVariant(name, suffix string, questionAware pipeline.Options, set func(*pipeline.Options, float64) string) (kind string, o pipeline.Options, what string, ok bool) {
	for _, k := range []string{"kg-walk", "dmar"} {
		v, found := strings.CutPrefix(name, k+suffix)
		if !found {
			continue
		}
		w, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", o, "", false
		}
		o = questionAware
		return k, o, k + " with " + set(&o, w), true
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
