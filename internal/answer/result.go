package answer

import (
	"github.com/dmar-kg/dmar/internal/evidence"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// SourcesOf are the retrieval's results as the answerer reads them,
// each with the graph's facts along the best path that reaches it.
func SourcesOf(res *pipeline.Result) []Source {
	docs := make([]Source, len(res.Results))
	for i, d := range res.Results {
		docs[i] = Source{ID: d.ID, Title: d.Title, Text: d.Text}
		if len(d.Breakdown.Paths) > 0 {
			docs[i].Facts = pathFacts(d.Breakdown.Paths[0])
		}
	}
	return docs
}

func pathFacts(p pipeline.NamedPath) []string {
	steps := make([]evidence.Step, len(p.Steps))
	for i, st := range p.Steps {
		rel := st.Label
		if rel == "" {
			rel = st.PID
		}
		steps[i] = evidence.Step{Relation: rel, Backward: st.Backward}
	}
	return evidence.FactLines(p.Text, steps)
}

// GraphOf is what the graph says the answer to res's question is: the
// entity its channel's path reached for the top document, when that
// document is the entity's own page; nil otherwise. trust marks it.
func GraphOf(res *pipeline.Result, trust GraphTrust) *GraphAnswer {
	if len(res.Results) == 0 {
		return nil
	}
	top := res.Results[0]
	g := top.Breakdown.Graph
	if top.Breakdown.Source != "kg" || g == nil || g.Bridge != nil || len(g.Steps) == 0 || g.Steps[len(g.Steps)-1].To != top.ID {
		return nil
	}
	out := &GraphAnswer{Doc: top.ID, Label: top.Title, Path: g.Path, Relevance: g.Relevance, Confidence: 1}
	for _, p := range top.Breakdown.Paths {
		if p.To == top.ID && len(p.Steps) == len(g.Steps) {
			out.Path = p.Text
			if p.ToLabel != "" {
				out.Label = p.ToLabel
			}
			break
		}
	}
	root := g.Steps[0].From
	for _, e := range res.QueryEntities {
		if e.QID == root && e.Confidence > 0 {
			out.Confidence = e.Confidence
		}
	}
	others, reached := 0, 0
	for _, d := range res.Results[1:min(len(res.Results), 5)] {
		others++
		if d.Breakdown.Source == "kg" {
			reached++
		}
	}
	if others > 0 {
		out.Agree = float64(reached) / float64(others)
	}
	trust.Trust(out)
	return out
}
