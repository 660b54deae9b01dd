package pipeline

import (
	"context"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// paper is the paper's method past phase 2 (DMAR-SPEC.md; method paper):
// the anchors' Shapley values guide the reformulation Q' (reform.go), Q'
// is searched for over the whole corpus (second.go), and the second
// search's candidates are scored again against Q (rerank.go), by the
// scoring stage it is composed with. The dmar method runs no anchors
// (m = 0), and so none of it. It reads the index, the encoder, the chat
// reformulator and its own options; of the request, the query and the
// trace.
type paper struct {
	score   scorer
	index   retrieval.Index
	encoder scoring.Encoder
	chat    Reformulator // nil: reformulator chat falls back to builtin
	query   string
	trace   *trace
	paperOptions
}

// paperOptions are the paper's phases' options.
type paperOptions struct {
	M, P, K      int    // anchors, stage-2 candidates, results
	Reformulator string // builtin | chat | none
	SnippetChars int    // the anchors' snippets given to the reformulator
	Stage2       string // hybrid | vector
	Stage2Alpha  float64
	Stage2Vector string // "" or reformulated (enc(Q')) | question (enc(Q))
	Fusion       retrieval.Fusion
	Filter       retrieval.Filter
}

func (o paperOptions) validate() error {
	for _, err := range []error{
		errs.IntIn("m", o.M, 0, 20),
		errs.IntIn("p", o.P, 1, 200),
		errs.IntIn("k", o.K, 1, 200),
		errs.OneOf("stage2", o.Stage2, "hybrid", "vector"),
		errs.Unit("stage2_alpha", o.Stage2Alpha),
		errs.OneOf("stage2_vector", o.Stage2Vector, "", "reformulated", "question"),
		errs.OneOf("reformulator", o.Reformulator, "builtin", "chat", "none"),
		errs.IntIn("snippet_chars", o.SnippetChars, 50, 5000),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// paperOptions are the paper's phases' settings in o.
func (o Options) paperOptions() paperOptions {
	return paperOptions{M: o.M, P: o.P, K: o.K, Reformulator: o.Reformulator, SnippetChars: o.SnippetChars, Stage2: o.Stage2,
		Stage2Alpha: o.Stage2Alpha, Stage2Vector: o.Stage2Vector, Fusion: o.Fusion, Filter: o.Filter}
}

// paper is the request's phases 3 and 4, scoring with score.
func (r request) paper(score scorer) paper {
	p, o, query, tr := r.p, r.opts, r.query, r.trace
	return paper{score: score, index: p.cfg.Index, encoder: p.cfg.Encoder, chat: p.cfg.Chat, query: query, trace: tr, paperOptions: o.paperOptions()}
}

// anchorsGuided is phases 3 and 4: the anchors guide the reformulation Q',
// searched for over the whole corpus, and the second search's candidates
// are reranked against the original Q. With m = 0 there are no anchors to
// guide anything: Q' is Q, there is no second search, and the results are
// phase 2's candidates in their order.
func (pp paper) anchorsGuided(ctx context.Context, rec recalled, sc scored, anchors []Doc) (reformulated, searchHits, reranked, error) {
	if pp.M == 0 {
		docs := []Doc{}
		for _, d := range topByScore(sc.docs, pp.K) {
			d.Breakdown.InFirst = true
			docs = append(docs, d)
		}
		return reformulated{query: pp.query, by: "none"}, searchHits{}, reranked{docs: docs, st: sc.st}, nil
	}
	ref, err := pp.reformulate(ctx, sc, anchors)
	if err != nil {
		return reformulated{}, searchHits{}, reranked{}, err
	}
	second, err := pp.secondStage(ctx, rec, ref)
	if err != nil {
		return reformulated{}, searchHits{}, reranked{}, err
	}
	fin, err := pp.rerank(ctx, sc, anchors, second.hits)
	return ref, second, fin, err
}
