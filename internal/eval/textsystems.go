package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

// mentionsVariant parses dmar-mentionsX and kg-walk-mentionsX: dmar's
// question-aware options (or its graph channel alone) with graph_mentions
// X, the weight of the documents that mention a reached entity.
func mentionsVariant(name string, questionAware pipeline.Options) (kind string, o pipeline.Options, what string, ok bool) {
	return weightVariant(name, "-mentions", questionAware, func(o *pipeline.Options, w float64) string {
		o.GraphMentions = w
		return fmt.Sprintf("graph_mentions %.3g (the documents that mention a reached entity)", w)
	})
}

// TextSystemNames are the text graph's systems, run only when named: ppr,
// the peers' recipe (HippoRAG 2's, without its language model) on dmar's
// text graph (the dense search's best passages and the phrases the question
// names or resembles seed a personalized PageRank; no DMAR stage), and
// dmar-text, dmar with the text graph channel on (text_graph 1). Their
// variants: ppr-... with -hN (hops) -uN (hub degree) -pN (passages seeded)
// -wX (a seeded passage's weight) -sN (similar phrases seeded) -mX (their
// least cosine) -dX (damping), and dmar-textX (text_graph X), dmar-text-...
// with the same tokens, -boost (final_rank boost: the fused score with the
// channels' offsets orders the results, not the learned ranker) and -gmX
// (graph_mentions X).
var TextSystemNames = []string{"ppr", "dmar-text"}

// textVariant parses ppr, dmar-text and their variants.
func textVariant(name string, questionAware pipeline.Options) (kind string, o pipeline.Options, what string, ok bool) {
	o = questionAware
	var rest string
	switch {
	case name == "ppr" || strings.HasPrefix(name, "ppr-"):
		kind, rest = "ppr", strings.TrimPrefix(strings.TrimPrefix(name, "ppr"), "-")
	case name == "dmar-text" || strings.HasPrefix(name, "dmar-text"):
		kind, rest = "dmar", strings.TrimPrefix(name, "dmar-text")
		o.TextGraph = 1
		if w, err := strconv.ParseFloat(strings.SplitN(rest, "-", 2)[0], 64); err == nil && rest != "" && rest[0] != '-' {
			o.TextGraph = w
			_, rest, _ = strings.Cut(rest, "-")
		}
		rest = strings.TrimPrefix(rest, "-")
	default:
		return "", o, "", false
	}
	tp := &o.TextParams
	for _, t := range strings.Split(rest, "-") {
		if t == "" {
			continue
		}
		if t == "boost" {
			o.FinalRank = pipeline.FinalRankBoost
			continue
		}
		if v, ok := strings.CutPrefix(t, "gm"); ok {
			w, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return "", o, "", false
			}
			o.GraphMentions = w
			continue
		}
		var err error
		switch t[0] {
		case 'h':
			tp.Hops, err = strconv.Atoi(t[1:])
		case 'u':
			tp.HubDegree, err = strconv.Atoi(t[1:])
		case 'p':
			tp.Passages, err = strconv.Atoi(t[1:])
		case 'w':
			tp.PassageW, err = strconv.ParseFloat(t[1:], 64)
		case 's':
			tp.Phrases, err = strconv.Atoi(t[1:])
		case 'm':
			tp.PhraseMin, err = strconv.ParseFloat(t[1:], 64)
		case 'd':
			tp.Damping, err = strconv.ParseFloat(t[1:], 64)
		default:
			return "", o, "", false
		}
		if err != nil {
			return "", o, "", false
		}
	}
	what = fmt.Sprintf("text graph walk: %d hops, hub degree %d, %d passages seeded at weight %.3g, %d similar phrases (cosine >= %.2f), damping %.2f",
		tp.Hops, tp.HubDegree, tp.Passages, tp.PassageW, tp.Phrases, tp.PhraseMin, tp.Damping)
	if kind == "ppr" {
		what = "the peers' recipe (HippoRAG 2's, no language model) on dmar's text graph, no DMAR stage: " + what
	} else {
		what = fmt.Sprintf("dmar with the text graph channel, text_graph %.3g: %s", o.TextGraph, what)
	}
	return kind, o, what, true
}
