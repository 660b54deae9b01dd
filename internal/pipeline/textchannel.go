package pipeline

import (
	"github.com/dmar-kg/dmar/internal/pipeline/kgchan"
	"github.com/dmar-kg/dmar/internal/pipeline/textchan"
)

// The channels' settings from the request's options.

// TextParams are the text channel's settings that no request sets
// (textchan.Params): dmar eval's ppr variants sweep them.
type TextParams = textchan.Params

// TextDefaults are the text channel's settings (textchan.Defaults).
func TextDefaults() TextParams { return textchan.Defaults() }

// textOptions are the text channel's settings in o.
func (o Options) textOptions() textchan.Options {
	return textchan.Options{Params: o.TextParams, K: o.TextGraphK, Filter: o.Filter}
}

// kgOptions are the KG channel's settings in o.
func (o Options) kgOptions() kgchan.Options {
	return kgchan.Options{Recall: o.GraphRecall, K: o.GraphRecallK, Weight: o.GraphWeight, Relations: o.GraphRelations,
		Roots: o.GraphRoots, Popularity: o.GraphPopularity, Mentions: o.GraphMentions, RelationQuery: o.GraphRelationQuery,
		HubDegree: o.HubDegree, Filter: o.Filter}
}
