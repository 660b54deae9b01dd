package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

// The named variants of dmar eval's systems (systems.go): dmar's options
// with one setting changed, parsed from the system's name, for choosing a
// setting on kgqa train.

// linksVariant parses dmar-linksN: dmar with title_links N (at most N
// pages its best document names follow it; N 0 turns that off).
func linksVariant(name string, questionAware pipeline.Options) (pipeline.Options, string, bool) {
	r, ok := strings.CutPrefix(name, "dmar-links")
	if !ok {
		return questionAware, "", false
	}
	n, err := strconv.Atoi(r)
	if err != nil || n < 0 || n > 10 {
		return questionAware, "", false
	}
	o := questionAware
	o.TitleLinks = n
	return o, fmt.Sprintf("title_links %d (at most %d pages the best document names follow it)", n, n), true
}

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
