package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/vec"
)

// TextWalk is the peers' recipe on dmar's text graph (the ppr system of dmar
// eval; HippoRAG 2's, without its language model): Q is encoded, the dense
// search's best TextParams.Passages passages and the phrases Q names or
// resembles seed a personalized PageRank over the text graph, and the
// passages are ranked by it; no DMAR stage, no KG linking of Q beyond the
// entity nodes its phrases name. Without a text graph it is refused: it
// would rank nothing, and an evaluation would report zeros as a result.
func (p *Pipeline) TextWalk(ctx context.Context, query string, opts Options) (*Result, error) {
	begin := time.Now()
	r, err := p.walkRequest(query, opts)
	if err != nil {
		return nil, err
	}
	if p.cfg.TextGraph == nil {
		return nil, errs.E(errs.Invalid, "the text graph walk (ppr) needs a text graph, and none is configured: build one at load with --text-graph spacy|heuristic (textgraph.extractor)")
	}
	vecs, err := p.cfg.Encoder.Encode(ctx, []string{r.query})
	if err != nil {
		return nil, fmt.Errorf("encode query: %w", err)
	}
	qvec := vecs[0]
	t := time.Now()
	var hits []retrieval.Hit
	if n := opts.TextParams.Passages; n > 0 {
		hits, err = p.cfg.Index.Search(ctx, retrieval.Query{Mode: retrieval.Vector, Vector: qvec, Limit: n, Filter: opts.Filter})
		if err != nil {
			return nil, fmt.Errorf("dense search: %w", err)
		}
	}
	r.trace.timed("recall", t)
	t = time.Now()
	ch, err := r.channels().text.Run(ctx, chanio.Query{Text: r.query, Vector: qvec, Hits: hits}, r.trace)
	if err != nil {
		return nil, err
	}
	r.trace.timed("text_graph", t)
	res := r.walkResult()
	qc := vec.NewCosiner(qvec)
	for i, h := range ch.Hits {
		if i == opts.K {
			break
		}
		th := ch.Docs[h.Doc.ID]
		d := Doc{ID: h.Doc.ID, Title: h.Doc.Title, Text: h.Doc.Text, Entities: h.Doc.Entities, Rank: i + 1, Score: h.Score,
			Breakdown: Breakdown{Stage: "text", SearchScore: h.Score, Explain: h.Explain, Source: "text", Text: &th, Paths: []NamedPath{}}}
		if len(h.Doc.Vector) > 0 {
			d.Breakdown.Semantic = qc.Cosine(h.Doc.Vector)
		}
		res.Results = append(res.Results, d)
	}
	res.Fallbacks = r.trace.fallbacks
	res.TimingsMS["total"] = float64(time.Since(begin).Microseconds()) / 1000
	return res, nil
}

// walkRequest is the request of a walk (GraphWalk, TextWalk): the query
// cleaned, the options checked.
func (p *Pipeline) walkRequest(query string, opts Options) (request, error) {
	query, err := cleanQuery(query)
	if err != nil {
		return request{}, err
	}
	if err := opts.Validate(); err != nil {
		return request{}, err
	}
	return p.newRequest(query, opts), nil
}

// walkResult is a walk's result before its documents: no anchors, no
// query subgraphs, the request's trace.
func (r request) walkResult() *Result {
	return &Result{Query: r.query, Options: r.opts, TimingsMS: r.trace.timings, Fallbacks: r.trace.fallbacks,
		Results: []Doc{}, Anchors: []Anchor{}, QueryEntities: []QueryEntity{}, QuerySubgraphs: []kg.Subgraph{}}
}
