package pipeline

import (
	"github.com/dmar-kg/dmar/internal/kg"
)

// queryEntities are the mentions with their entities' labels (empty for an
// entity ents lacks).
func queryEntities(ms []kg.Mention, ents map[string]kg.Entity) []QueryEntity {
	out := []QueryEntity{}
	for _, m := range ms {
		out = append(out, QueryEntity{QID: m.QID, Label: ents[m.QID].Label, Surface: m.Surface, Start: m.Start, End: m.End})
	}
	return out
}
