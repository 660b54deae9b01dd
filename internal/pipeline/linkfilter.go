package pipeline

import (
	"context"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/vec"
)

// The context linker (option linking=context, opt-in; the method links
// exactly): the graph lists every span's candidates, derived forms included
// (kg.CandidateLinker), each candidate is scored by kg.ConfidenceParams with
// the cosine between enc(Q) and the entity's document vector as context
// when the index holds a document for the entity, and mentions below the
// threshold are dropped, the most confident one kept (kg.ResolveConfident).
// A graph that cannot list candidates links exactly, and the response says so.

// linkWith links Q by the request's linking mode; qvec is enc(Q), early
// the candidates read before Q was encoded, or nil.
func (r request) linkWith(ctx context.Context, qvec []float32, early *earlyLink) ([]kg.Mention, error) {
	if r.opts.Linking != "context" {
		return r.p.cfg.Graph.Link(ctx, r.query)
	}
	cl, ok := r.p.cfg.Graph.(kg.CandidateLinker)
	if !ok {
		r.trace.fallback("linking_exact", "the graph backend cannot list link candidates: linked exactly")
		return r.p.cfg.Graph.Link(ctx, r.query)
	}
	toks, spans, read := early.candidates()
	if !read {
		var err error
		if toks, spans, err = cl.LinkCandidates(ctx, r.query); err != nil {
			return nil, err
		}
	}
	return kg.ResolveConfident(r.query, toks, spans, r.entityContext(ctx, qvec, kg.CandidateQIDs(spans)), kg.DefaultConfidenceParams()), nil
}

// LinkQuery links query as a retrieval with opts does; qvec is enc(query)
// (needed by linking=context).
func (p *Pipeline) LinkQuery(ctx context.Context, query string, qvec []float32, opts Options) ([]kg.Mention, error) {
	return p.newRequest(query, opts).linkWith(ctx, qvec, nil)
}

// entityContext is the cosine between qvec and the document vector of each
// entity among qids that the index holds a document for (documents are
// keyed by QID). An index error leaves the context out.
func (r request) entityContext(ctx context.Context, qvec []float32, qids []string) map[string]float64 {
	if len(qids) == 0 || len(qvec) == 0 {
		return nil
	}
	docs, err := r.p.cfg.Index.Documents(ctx, qids)
	if err != nil {
		return nil
	}
	out := make(map[string]float64, len(docs))
	for _, d := range docs {
		if len(d.Vector) == len(qvec) {
			out[d.ID] = vec.Cosine(qvec, d.Vector)
		}
	}
	return out
}
