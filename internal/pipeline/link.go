package pipeline

import (
	"context"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Link links text to knowledge-graph entities and labels them, as a
// retrieval lists its query entities (the API's /v1/link). Graph errors are
// returned; a retrieval degrades on them instead, and labels its mentions
// with the same queryEntities from its one Graph.Entities call (ground).
func (p *Pipeline) Link(ctx context.Context, text string) ([]QueryEntity, error) {
	ms, err := p.cfg.Graph.Link(ctx, text)
	if err != nil {
		return nil, err
	}
	ents, err := p.cfg.Graph.Entities(ctx, kg.QIDs(ms))
	if err != nil {
		return nil, err
	}
	return queryEntities(ms, ents), nil
}

// queryEntities are the mentions with their entities' labels (empty for an
// entity ents lacks).
func queryEntities(ms []kg.Mention, ents map[string]kg.Entity) []QueryEntity {
	out := []QueryEntity{}
	for _, m := range ms {
		out = append(out, QueryEntity{QID: m.QID, Label: ents[m.QID].Label, Surface: m.Surface, Start: m.Start, End: m.End, Confidence: m.Confidence})
	}
	return out
}
