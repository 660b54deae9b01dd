package kgchan

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// What the KG's relation cosines read. Path relevance compares Q with the
// relation texts on a path, under the relation encoder. With
// graph_relation_query masked the channel compares them with Q without its
// linked mentions instead: the names in Q pull enc(Q) towards the
// entities' own topics ("what is the nationality of georgius agricola":
// mining, science) rather than towards what Q asks of them; the document
// cosine still reads enc(Q). docs/method.md.

// RelationPrefetch is the masked relation query being encoded while stage 1
// searches and the channel's neighbourhoods are read (the encoder's threads
// and the search's run side by side), for the mentions it was started with.
type RelationPrefetch struct {
	mentions []kg.Mention
	done     chan struct{}
	vec      []float32
	err      error
}

// Encoded is the relation query of mentions already encoded as vec (the
// masked question encoded or projected with Q), or the error that encoding
// it failed with.
func Encoded(mentions []kg.Mention, vec []float32, err error) *RelationPrefetch {
	pf := &RelationPrefetch{mentions: mentions, done: make(chan struct{}), vec: vec, err: err}
	close(pf.done)
	return pf
}

// PrefetchRelationQuery starts encoding the channel's relation query for
// q's mentions; nil when the channel needs none before it runs.
func (c Channel) PrefetchRelationQuery(ctx context.Context, q chanio.Query) *RelationPrefetch {
	if c.Recall == 0 || c.RelationQuery != "masked" {
		return nil
	}
	pf := &RelationPrefetch{mentions: q.Mentions, done: make(chan struct{})}
	go func() {
		defer close(pf.done)
		pf.vec, pf.err = c.relationQuery(ctx, q.Text, q.RelVector, q.Mentions)
	}()
	return pf
}

// relationQueryOf is relationQuery, taken from pf when pf was started for
// the same mentions.
func (c Channel) relationQueryOf(ctx context.Context, text string, pf *RelationPrefetch, relvec *chanio.RelVector, mentions []kg.Mention) ([]float32, error) {
	if pf == nil || !slices.Equal(pf.mentions, mentions) {
		return c.relationQuery(ctx, text, relvec, mentions)
	}
	select {
	case <-pf.done:
		return pf.vec, pf.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// relationQuery is the vector the channel's relation cosines read: relvec,
// or with masked the encoding of Q (text) with mentions cut out (relvec
// when nothing is left or nothing was linked).
func (c Channel) relationQuery(ctx context.Context, text string, relvec *chanio.RelVector, mentions []kg.Mention) ([]float32, error) {
	if c.RelationQuery != "masked" {
		return relvec.Get(ctx)
	}
	q := MaskMentions(text, mentions)
	if q == "" || q == strings.TrimSpace(text) {
		return relvec.Get(ctx)
	}
	vs, err := c.Encoder.Encode(ctx, []string{q})
	if err != nil {
		return nil, fmt.Errorf("encode the relation query: %w", err)
	}
	return vs[0], nil
}

// StepPrior is the learned relation prior for Q (relvec) weighted by
// PriorWeight (dmar eval's -pX variants), or nil when it is 0, or no prior
// model is loaded (then path relevance is the cosine alone, and the trace
// says so). A model failure fails the request, as any model failure does.
func (c Channel) StepPrior(ctx context.Context, relvec *chanio.RelVector, tr chanio.Trace) (map[pathrel.StepKey]float64, error) {
	w := c.PriorWeight
	if w == 0 {
		return nil, nil
	}
	if c.Prior == nil {
		if !tr.HasFallback("path_prior_unavailable") {
			tr.Fallback("path_prior_unavailable", "no relation prior model is loaded: path relevance is the cosine alone")
		}
		return nil, nil
	}
	v, err := relvec.Get(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := c.Prior.Prior(ctx, v)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("relation prior: %w", err)
	}
	for k, v := range pr {
		pr[k] = w * v
	}
	return pr, nil
}

// MaskMentions is text with each mention's span cut out (by its byte
// offsets when they hold its surface, else its first occurrence), the
// whitespace collapsed; "" when only punctuation and space are left.
func MaskMentions(text string, ms []kg.Mention) string {
	var b strings.Builder
	at := 0
	for _, s := range MentionSpans(text, ms) {
		if s.Start < at { // overlapping mentions: cut their union
			s.Start = at
		}
		if s.End <= at {
			continue
		}
		b.WriteString(text[at:s.Start])
		b.WriteByte(' ')
		at = s.End
	}
	b.WriteString(text[at:])
	out := strings.Join(strings.Fields(b.String()), " ")
	if !strings.ContainsFunc(out, func(r rune) bool {
		return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127
	}) {
		return ""
	}
	return out
}

// MentionSpans are the bytes of text that MaskMentions cuts for ms, in
// order of their start: each mention's offsets when they hold its surface,
// else its surface's first occurrence.
func MentionSpans(text string, ms []kg.Mention) []scoring.Span {
	var spans []scoring.Span
	for _, m := range ms {
		if m.Start >= 0 && m.End <= len(text) && m.Start < m.End && text[m.Start:m.End] == m.Surface {
			spans = append(spans, scoring.Span{Start: m.Start, End: m.End})
		} else if i := strings.Index(text, m.Surface); m.Surface != "" && i >= 0 {
			spans = append(spans, scoring.Span{Start: i, End: i + len(m.Surface)})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].Start < spans[j].Start })
	return spans
}
