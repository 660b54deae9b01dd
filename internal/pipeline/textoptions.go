package pipeline

import (
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/pipeline/textchan"
)

// TextOptions are the text graph channel's request options (the textchan
// package; beyond the paper), off by default: a request turns it on with
// text_graph > 0.
type TextOptions struct {
	// TextGraph turns the channel on (> 0) where a text graph is
	// configured. Under final_rank boost it is the weight of the channel's
	// normalised score (its PPR score over its best) added to the fused
	// score of the documents it reached; under final_rank learned the
	// weight of the channel's order in its reciprocal-rank fusion with the
	// ranker's (fuseText). 0: off.
	TextGraph float64 `json:"text_graph,omitempty"`
	// TextGraphK is how many documents the channel adds to each search's
	// candidates.
	TextGraphK int `json:"text_graph_k,omitempty"`
	// TextParams are the walk's settings no request sets (dmar eval's ppr
	// variants sweep them).
	TextParams TextParams `json:"-"`
}

// textDefaults are the channel's defaults: off, 50 documents when on.
func textDefaults() TextOptions {
	return TextOptions{TextGraphK: 50, TextParams: TextDefaults()}
}

func (o TextOptions) validate() error {
	if err := errs.Within("text_graph", o.TextGraph, 0, 100); err != nil {
		return err
	}
	return textchan.Options{Params: o.TextParams, K: o.TextGraphK}.Validate()
}

// TextParams are the text channel's settings that no request sets
// (textchan.Params): dmar eval's ppr variants sweep them.
type TextParams = textchan.Params

// TextDefaults are the text channel's settings (textchan.Defaults).
func TextDefaults() TextParams { return textchan.Defaults() }

// textOptions are the text channel's settings in o.
func (o Options) textOptions() textchan.Options {
	return textchan.Options{Params: o.TextParams, K: o.TextGraphK, Filter: o.Filter}
}
