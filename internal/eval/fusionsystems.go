package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

// kgRankVariant parses dmar-kgrankW and dmar-kgrankW-kK: dmar with the
// learned ranker's order fused by reciprocal rank with the KG channel's
// own order, the channel weighing W (kg_rank) at the constant K (kg_rank_k,
// pipeline.DefaultKGRankK when not given); dmar-kgrank0 is the ranker's
// order alone.
func kgRankVariant(name string, questionAware pipeline.Options) (pipeline.Options, string, bool) {
	rest, ok := strings.CutPrefix(name, "dmar-kgrank")
	if !ok {
		return questionAware, "", false
	}
	o := questionAware
	ws, ks, hasK := strings.Cut(rest, "-k")
	w, err := strconv.ParseFloat(ws, 64)
	if err != nil {
		return questionAware, "", false
	}
	o.KGRank = w
	if hasK {
		if o.KGRankK, err = strconv.Atoi(ks); err != nil {
			return questionAware, "", false
		}
	}
	return o, fmt.Sprintf("the ranker's order fused by reciprocal rank with the KG channel's, kg_rank %g, kg_rank_k %d", o.KGRank, o.KGRankK), true
}
