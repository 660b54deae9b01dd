package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/pipeline/kgchan"
	"github.com/dmar-kg/dmar/internal/vec"
)

// GraphWalk is the graph channel alone (the kg-walk system): Q is encoded
// and linked, and the documents of the entities reachable from its entities
// are ranked by their graph score, no DMAR stage. A query that links to no
// entity ranks nothing. graph_recall 0 is walked as 1.
func (p *Pipeline) GraphWalk(ctx context.Context, query string, opts Options) (*Result, error) {
	begin := time.Now()
	if opts.GraphRecall == 0 {
		opts.GraphRecall = 1
	}
	r, err := p.walkRequest(query, opts)
	if err != nil {
		return nil, err
	}
	in, q, err := r.walkQuery(ctx)
	if err != nil {
		return nil, err
	}
	kc := r.channels().kg
	kc.RelationAhead = q.relationQuery(ctx, r.linker(), in.Mentions)
	ch, err := runChannel(ctx, kc, true, "graph_recall", in, r.trace)
	if err != nil {
		return nil, err
	}
	res := r.walkResult()
	res.QueryEntities = queryEntities(in.Mentions, nil)
	res.Results = walkResults(in.Vector, ch, opts.K)
	ix, err := r.explainer().namePaths(ctx, in.RelVector, ch, nil, res.QueryEntities, res.Results)
	if err != nil {
		return nil, err
	}
	ix.explainPaths(res.Results)
	if insp, ok := p.cfg.Graph.(kg.Inspector); ok {
		res.Neo4jPaths = pathStatement(insp, res.Results)
	}
	res.Fallbacks = r.trace.fallbacks
	res.TimingsMS["total"] = float64(time.Since(begin).Microseconds()) / 1000
	return res, nil
}

// walkQuery is the walk's channel input: Q encoded (and under the relation
// encoder) and linked, and with graph_roots its own stage-1 search's hits;
// and Q as encoded, for its relation query.
func (r request) walkQuery(ctx context.Context) (chanio.Query, question, error) {
	lk := r.linker()
	q, err := lk.encodeWalkQuestion(ctx)
	if err != nil {
		return chanio.Query{}, q, err
	}
	in := chanio.Query{Text: r.query, Vector: q.vec, RelVector: q.relvec}
	if in.Mentions, err = lk.link(ctx, in.Vector, nil); err != nil {
		if ctx.Err() != nil {
			return chanio.Query{}, q, ctx.Err()
		}
		return chanio.Query{}, q, fmt.Errorf("link: %w", err)
	}
	if r.opts.GraphRoots > 0 {
		if in.Hits, err = r.p.cfg.Index.Search(ctx, r.recaller().stage1Query(in.Vector, r.opts.GraphRoots)); err != nil {
			return chanio.Query{}, q, fmt.Errorf("stage 1 search: %w", err)
		}
	}
	return in, q, nil
}

// walkResults are the channel's first k documents, ranked by graph score.
func walkResults(qvec []float32, ch kgchan.Output, k int) []Doc {
	out := []Doc{}
	for i, h := range ch.Hits {
		if i == k {
			break
		}
		d := Doc{ID: h.Doc.ID, Title: h.Doc.Title, Text: h.Doc.Text, Entities: h.Doc.Entities, Rank: i + 1, Score: h.Score,
			Breakdown: Breakdown{Stage: "kg", SearchScore: h.Score, Explain: h.Explain}}
		if len(h.Doc.Vector) > 0 {
			d.Breakdown.Semantic = vec.Cosine(qvec, h.Doc.Vector)
		}
		gp := ch.Paths[h.Doc.ID]
		d.Breakdown.Source, d.Breakdown.Graph = "kg", &gp
		out = append(out, d)
	}
	return out
}
