package pipeline

import (
	"context"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/pipeline/kgchan"
	"github.com/dmar-kg/dmar/internal/pipeline/textchan"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// Channel is a candidate source beside the searches (beyond the paper), as
// the pipeline consumes it: it runs once in phase 1, after the stage-1
// search, from Q encoded and linked and the search's hits (a
// chanio.Query); its documents join the candidates of both searches (C and
// C_sec) and its score is added to their fused score in both scoring
// phases (fusion.fuse). It reports its degradations in the trace it is
// given and never sees the request. Each channel is its own package and
// asserts that it implements Channel of its output: the KG's graph channel
// (kgchan) and the text graph channel (textchan). A new channel gets its
// own package, a field in channels, its hits in channels.hits and its
// score in fusion (docs/architecture.md).
type Channel[Out any] interface {
	Run(ctx context.Context, q chanio.Query, tr chanio.Trace) (Out, error)
}

// channels are the channels' outputs for one request.
type channels struct {
	kg   kgchan.Output   // the KG's graph channel (graph_recall)
	text textchan.Output // the text graph channel (text_graph)
}

// hits are the channels' documents, channel by channel, best first.
func (c channels) hits() []retrieval.Hit {
	if len(c.text.Hits) == 0 {
		return c.kg.Hits
	}
	return mergeHits(c.kg.Hits, c.text.Hits)
}

// channelSet is one request's channels, built from its options (on: the
// option that turns each on is set).
type channelSet struct {
	kg           kgchan.Channel
	text         textchan.Channel
	kgOn, textOn bool
}

// channels are the request's channels.
func (r request) channels() channelSet {
	p, o := r.p, r.opts
	return channelSet{
		kg: kgchan.Channel{Graph: p.cfg.Graph, Docs: p.cfg.Index, MentionIndex: p.cfg.Mentions,
			RelationTexts: p.relations(o.GraphRelations == "directed"), Encoder: p.relationEncoder(),
			Prior: p.cfg.RelPrior, PriorWeight: p.pathPrior, Options: o.kgOptions(), Speculate: p.cfg.SpeculateChannel},
		text:   textchan.Channel{Store: p.cfg.TextGraph, Linker: p.cfg.Graph, Docs: p.cfg.Index, Options: o.textOptions()},
		kgOn:   o.GraphRecall > 0,
		textOn: o.TextGraph > 0,
	}
}

// run runs the channels that are on for q. Only the context's errors and
// model failures fail the request: a channel whose backend fails adds
// nothing and says so in the trace.
func (cs channelSet) run(ctx context.Context, q chanio.Query, tr *trace) (channels, error) {
	kgOut, err := runChannel(ctx, cs.kg, cs.kgOn, "graph_recall", q, tr)
	if err != nil {
		return channels{}, err
	}
	text, err := runChannel(ctx, cs.text, cs.textOn, "text_graph", q, tr)
	if err != nil {
		return channels{}, err
	}
	return channels{kg: kgOut, text: text}, nil
}

// runChannel runs c for q when it is on, timed as stage name; its zero
// output when it is off.
func runChannel[Out any](ctx context.Context, c Channel[Out], on bool, name string, q chanio.Query, tr *trace) (Out, error) {
	if !on {
		var none Out
		return none, nil
	}
	defer tr.timed(name, time.Now())
	return c.Run(ctx, q, tr)
}

// mergeHits is the union of a search's hits and a channel's, the search's
// first, each document once.
func mergeHits(search, channel []retrieval.Hit) []retrieval.Hit {
	if len(channel) == 0 {
		return search
	}
	seen := make(map[string]bool, len(search))
	out := append([]retrieval.Hit(nil), search...)
	for _, h := range search {
		seen[h.Doc.ID] = true
	}
	for _, h := range channel {
		if !seen[h.Doc.ID] {
			seen[h.Doc.ID] = true
			out = append(out, h)
		}
	}
	return out
}

// ChannelSubgraphs are the subgraphs the graph channel walks from roots
// (kgchan.Subgraphs).
func (p *Pipeline) ChannelSubgraphs(ctx context.Context, roots []string, hops, hubDegree int) (map[string]kg.Subgraph, error) {
	return kgchan.Subgraphs(ctx, p.cfg.Graph, roots, hops, hubDegree)
}
