package pipeline

import (
	"context"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"

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

// linker is the link stage: Q encoded (question.go) and linked to the
// graph's entities, by its own options. It reads the graph, the index (the
// context linker's entity context) and the encoders, nothing of the
// request but the query and the trace.
type linker struct {
	graph   kg.Graph
	index   retrieval.Index
	encoder scoring.Encoder
	// relEncoder is the relation encoder: encoder unless one of its own is
	// configured (ownRelEncoder)
	relEncoder    scoring.Encoder
	ownRelEncoder bool
	// questions encodes Q once for both encoders (Config.Questions); nil
	// with no relation encoder of its own
	questions scoring.QuestionEncoder
	query     string
	trace     *trace
	linkOptions
}

// linkOptions are the link stage's options.
type linkOptions struct {
	// Linking is exact ("" or exact: the method's) or context.
	Linking string
	// masked: the graph channel reads Q's masked question
	// (graph_relation_query masked), which the stage encodes with Q.
	masked bool
	// structure: the structural path is on (structure is not off).
	structure bool
}

func (o linkOptions) validate() error {
	return errs.OneOf("linking", o.Linking, "", "exact", "context")
}

// linkOptions are the link stage's settings in o.
func (o Options) linkOptions() linkOptions {
	return linkOptions{Linking: o.Linking, masked: o.GraphRecall > 0 && o.GraphRelationQuery == "masked", structure: o.Structure != "off"}
}

// linker is the request's link stage.
func (r request) linker() linker {
	p, o, query, tr := r.p, r.opts, r.query, r.trace
	return linker{graph: p.cfg.Graph, index: p.cfg.Index, encoder: p.cfg.Encoder, relEncoder: p.relationEncoder(),
		ownRelEncoder: p.cfg.RelationEncoder != nil, questions: p.questions(), query: query, trace: tr, linkOptions: o.linkOptions()}
}

// link links Q by the request's linking mode; qvec is enc(Q), early
// the candidates read before Q was encoded, or nil.
func (l linker) link(ctx context.Context, qvec []float32, early *earlyLink) ([]kg.Mention, error) {
	if l.Linking != "context" {
		return l.graph.Link(ctx, l.query)
	}
	cl, ok := l.graph.(kg.CandidateLinker)
	if !ok {
		l.trace.fallback("linking_exact", "the graph backend cannot list link candidates: linked exactly")
		return l.graph.Link(ctx, l.query)
	}
	toks, spans, read := early.candidates()
	if !read {
		var err error
		if toks, spans, err = cl.LinkCandidates(ctx, l.query); err != nil {
			return nil, err
		}
	}
	return kg.ResolveConfident(l.query, toks, spans, l.entityContext(ctx, qvec, kg.CandidateQIDs(spans)), kg.DefaultConfidenceParams()), nil
}

// LinkQuery links query as a retrieval with opts does; qvec is enc(query)
// (needed by linking=context).
func (p *Pipeline) LinkQuery(ctx context.Context, query string, qvec []float32, opts Options) ([]kg.Mention, error) {
	return p.newRequest(query, opts).linker().link(ctx, qvec, nil)
}

// entityContext is the cosine between qvec and the document vector of each
// entity among qids that the index holds a document for (documents are
// keyed by QID). An index error leaves the context out.
func (l linker) entityContext(ctx context.Context, qvec []float32, qids []string) map[string]float64 {
	if len(qids) == 0 || len(qvec) == 0 {
		return nil
	}
	docs, err := l.index.Documents(ctx, qids)
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

// linkQuery links Q (the graph channel and the final ranking read its
// entities whatever the structural path does) and says whether the
// structural path is on: the request may turn it off (structure off), and
// a graph failure turns it off instead of failing the request.
func (l linker) linkQuery(ctx context.Context, q question) ([]kg.Mention, bool, error) {
	ms, err := l.link(ctx, q.vec, q.early)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		l.trace.fallback("graph_unavailable", "linking failed, structural path off: "+err.Error())
		return ms, false, nil
	}
	return ms, l.structure, nil
}
