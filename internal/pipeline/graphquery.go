package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// The graph channel's relation query (graph_relation_query; off by
// default): with masked, the relations on a path are matched against
// enc(Q without its linked mentions) instead of enc(Q). The names in Q pull
// enc(Q) towards the entities' own topics ("what is the nationality of
// georgius agricola": mining, science) rather than towards what Q asks of
// them; the document cosine still reads enc(Q). docs/method.md.

// relationQuery is the vector the channel's relation cosines read: qvec,
// or with masked the encoding of Q with its mentions cut out (qvec when
// nothing is left or nothing was linked).
func (r request) relationQuery(ctx context.Context, qvec []float32) ([]float32, error) {
	if r.opts.GraphRelationQuery != "masked" {
		return r.relVec(qvec), nil
	}
	q := maskMentions(r.query, r.mentions)
	if q == "" || q == strings.TrimSpace(r.query) {
		return r.relVec(qvec), nil
	}
	vs, err := r.p.relationEncoder().Encode(ctx, []string{q})
	if err != nil {
		return nil, fmt.Errorf("encode the relation query: %w", err)
	}
	return vs[0], nil
}

// earlyLink is what a masked relation query lets the request read before
// it encodes Q: Q's link candidates (one round trip, which linking then
// reuses) and the masked question of their resolution without context,
// encoded in the same call as Q. Context (enc(Q)) rarely changes which
// spans are linked; when it does, the relation query is encoded again.
type earlyLink struct {
	toks   []kg.Token
	spans  []kg.SpanCandidates
	masked string
	vec    []float32 // enc(masked), nil when masked is not encoded
}

// encodeQuestion is enc(Q) and, for a request whose graph channel matches
// relations against the masked question (with the context linker over a
// graph that lists candidates), the early link and its masked question,
// encoded together with Q.
func (r request) encodeQuestion(ctx context.Context) ([]float32, *earlyLink, error) {
	o := r.opts
	var el *earlyLink
	if cl, ok := r.p.cfg.Graph.(kg.CandidateLinker); ok && o.GraphRecall > 0 && o.GraphRelationQuery == "masked" && o.Linking == "context" && o.Structure != "off" {
		toks, spans, err := cl.LinkCandidates(ctx, r.query)
		if err != nil && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if err == nil { // else linking asks again and handles the error
			el = &earlyLink{toks: toks, spans: spans, masked: maskMentions(r.query, kg.ResolveConfident(r.query, toks, spans, nil, kg.DefaultConfidenceParams()))}
		}
	}
	texts := []string{r.query}
	masked := el != nil && el.masked != "" && el.masked != strings.TrimSpace(r.query)
	if masked {
		texts = append(texts, el.masked)
	}
	if r.p.cfg.RelationEncoder != nil {
		// Q under the relation encoder (and the masked Q), beside enc(Q).
		var rel [][]float32
		var relErr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			rel, relErr = r.encodeRelationQuestion(ctx, texts)
		}()
		vecs, err := r.p.cfg.Encoder.Encode(ctx, texts[:1])
		<-done
		if err != nil {
			return nil, nil, fmt.Errorf("encode query: %w", err)
		}
		if relErr != nil {
			return nil, nil, relErr
		}
		if masked {
			el.vec = rel[1]
		}
		return vecs[0], el, nil
	}
	vecs, err := r.p.cfg.Encoder.Encode(ctx, texts)
	if err != nil {
		return nil, nil, fmt.Errorf("encode query: %w", err)
	}
	if masked {
		el.vec = vecs[1]
	}
	return vecs[0], el, nil
}

// relQuestion is Q under a relation encoder of its own
// (Config.RelationEncoder), nil without one.
type relQuestion struct{ vec []float32 }

// relationEncoder is the encoder of the relation texts and the question
// they are compared with.
func (p *Pipeline) relationEncoder() scoring.Encoder {
	if p.cfg.RelationEncoder != nil {
		return p.cfg.RelationEncoder
	}
	return p.cfg.Encoder
}

// encodeRelationQuestion encodes texts (Q first) with the relation encoder
// and keeps Q's vector for relVec.
func (r request) encodeRelationQuestion(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := r.p.relationEncoder().Encode(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("encode the relation query: %w", err)
	}
	r.relQ.vec = vs[0]
	return vs, nil
}

// relVec is the vector of Q that relation cosines read: qvec = enc(Q), or
// Q under the relation encoder when it has one of its own.
func (r request) relVec(qvec []float32) []float32 {
	if r.relQ != nil && r.relQ.vec != nil {
		return r.relQ.vec
	}
	return qvec
}

// candidates are the early link's candidates; ok is false without one.
func (el *earlyLink) candidates() (toks []kg.Token, spans []kg.SpanCandidates, ok bool) {
	if el == nil {
		return nil, nil, false
	}
	return el.toks, el.spans, true
}

// relationQuery is the relation query of mentions when the early link
// encoded it (its masked question is theirs), else nil.
func (el *earlyLink) relationQuery(query string, mentions []kg.Mention) *relationPrefetch {
	if el == nil || el.vec == nil || maskMentions(query, mentions) != el.masked {
		return nil
	}
	pf := &relationPrefetch{mentions: mentions, done: make(chan struct{}), vec: el.vec}
	close(pf.done)
	return pf
}

// relationPrefetch is the masked relation query being encoded while stage 1
// searches and the channel's neighbourhoods are read (the encoder's threads
// and the search's run side by side), for the mentions it was started with.
type relationPrefetch struct {
	mentions []kg.Mention
	done     chan struct{}
	vec      []float32
	err      error
}

// prefetchRelationQuery starts encoding the relation query for mentions;
// nil when the request needs none.
func (r request) prefetchRelationQuery(ctx context.Context, qvec []float32, mentions []kg.Mention) *relationPrefetch {
	if r.opts.GraphRecall == 0 || r.opts.GraphRelationQuery != "masked" {
		return nil
	}
	pf := &relationPrefetch{mentions: mentions, done: make(chan struct{})}
	r.mentions = mentions
	go func() {
		defer close(pf.done)
		pf.vec, pf.err = r.relationQuery(ctx, qvec)
	}()
	return pf
}

// relationQueryOf is relationQuery, taken from pf when pf was started for
// the request's mentions.
func (r request) relationQueryOf(ctx context.Context, pf *relationPrefetch, qvec []float32) ([]float32, error) {
	if pf == nil || !slices.Equal(pf.mentions, r.mentions) {
		return r.relationQuery(ctx, qvec)
	}
	select {
	case <-pf.done:
		return pf.vec, pf.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// maskMentions is text with each mention's span cut out (by its byte
// offsets when they hold its surface, else its first occurrence), the
// whitespace collapsed; "" when only punctuation and space are left.
func maskMentions(text string, ms []kg.Mention) string {
	type span struct{ start, end int }
	var spans []span
	for _, m := range ms {
		if m.Start >= 0 && m.End <= len(text) && m.Start < m.End && text[m.Start:m.End] == m.Surface {
			spans = append(spans, span{m.Start, m.End})
		} else if i := strings.Index(text, m.Surface); m.Surface != "" && i >= 0 {
			spans = append(spans, span{i, i + len(m.Surface)})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var b strings.Builder
	at := 0
	for _, s := range spans {
		if s.start < at { // overlapping mentions: cut their union
			s.start = at
		}
		if s.end <= at {
			continue
		}
		b.WriteString(text[at:s.start])
		b.WriteByte(' ')
		at = s.end
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

// relationVector is the vector the request's relation cosines read: the
// channel's masked question when it ran with one, else qvec (the results'
// path explanations score their paths as the channel did).
func (ch *graphChannel) relationVector(qvec []float32) []float32 {
	if ch == nil || ch.relq == nil {
		return qvec
	}
	return ch.relq
}
