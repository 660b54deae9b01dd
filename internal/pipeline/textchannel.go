package pipeline

import (
	"context"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/textchan"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// The text graph channel (text_graph) is its own package, textchan; this
// file hands it the request's query, options and trace.

// TextParams are the text channel's settings that no request sets
// (textchan.Params): dmar eval's ppr variants sweep them.
type TextParams = textchan.Params

// TextDefaults are the text channel's settings (textchan.Defaults).
func TextDefaults() TextParams { return textchan.Defaults() }

// textChannel is the channel's output for one request: its documents, best
// first, and what it says of each.
type textChannel = textchan.Output

// textChannel runs the channel for in, from Q's linked entities and the
// stage-1 hits; empty when the option is off.
func (r request) textChannel(ctx context.Context, in channelQuery) (textChannel, error) {
	if r.opts.TextGraph == 0 {
		return textChannel{}, nil
	}
	defer r.trace.timed("text_graph", time.Now())
	return r.textWalk(ctx, in.qvec, in.mentions, in.hits)
}

// textWalk runs the channel over the configured text graph, seeded with
// mentions (none: the peers' recipe, ppr) and hits.
func (r request) textWalk(ctx context.Context, qvec []float32, mentions []kg.Mention, hits []retrieval.Hit) (textChannel, error) {
	c := textchan.Channel{Store: r.p.cfg.TextGraph, Linker: r.p.cfg.Graph, Docs: r.p.cfg.Index}
	q := textchan.Query{Text: r.query, Vector: qvec, Mentions: mentions, Hits: hits}
	return c.Run(ctx, q, textchan.Options{Params: r.opts.TextParams, K: r.opts.TextGraphK, Filter: r.opts.Filter}, r.trace)
}
