package pipeline

import (
	"context"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

// Channels are candidate sources beside the searches (beyond the paper): a
// channel runs once in phase 1, after the stage-1 search; its documents
// join the candidates of both searches (C and C_sec) and its score is added
// to their fused score in both scoring phases. The KG's graph channel
// (kgchannel.go and the other kg*.go files) is the first. A new channel
// gets its own files with its own stages, a field in channels, its hits in
// channels.hits and its score in fuse; it reads a channelQuery and nothing
// of the request but the options and the trace (docs/architecture.md).

// channelQuery is what a channel starts from: Q encoded and linked, and the
// stage-1 search's hits.
type channelQuery struct {
	qvec   []float32 // enc(Q)
	relvec []float32 // Q under the relation encoder (qvec without one of its own)
	// mentions are Q's linked mentions: the structural path's, or with the
	// structural path off, the exact linker's
	mentions []kg.Mention
	hits     []retrieval.Hit // stage 1's, in search order
	// relq is the KG channel's relation query, encoded ahead while stage 1
	// searched (kgquery.go); nil: the channel encodes it when it needs it
	relq *relationPrefetch
	// nbq are the linked roots' neighbourhoods, read while stage 1
	// searched (kgchannel.go); nil: the channel reads them all itself
	nbq *neighbourhoodPrefetch
}

// channels are the channels' outputs for one request.
type channels struct {
	kg   graphChannel // the KG's graph channel (graph_recall)
	text textChannel  // the text graph channel (text_graph; textchannel.go)
}

// hits are the channels' documents, channel by channel, best first.
func (c channels) hits() []retrieval.Hit {
	if len(c.text.Hits) == 0 {
		return c.kg.hits
	}
	return mergeHits(c.kg.hits, c.text.Hits)
}

// runChannels runs the request's channels for in. Only the context's errors
// and model failures fail the request: a channel whose backend fails adds
// nothing and says so in the trace.
func (r request) runChannels(ctx context.Context, in channelQuery) (channels, error) {
	kg, err := r.kgChannel(ctx, in)
	if err != nil {
		return channels{}, err
	}
	text, err := r.textChannel(ctx, in)
	if err != nil {
		return channels{}, err
	}
	return channels{kg: kg, text: text}, nil
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
