package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
	"github.com/dmar-kg/dmar/internal/pipeline/kgchan"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// Q encoded (phase 1). Path relevance compares Q with the relation texts
// on a path under the relation encoder (Config.RelationEncoder, or the
// encoder); with graph_relation_query masked the graph channel reads Q
// without its linked mentions (kgchan). With a question encoder
// (Config.Questions) one model call gives enc(Q) and, projected, Q and its
// masked question under the relation encoder; without one the early link
// lets the request encode the masked question together with Q.

// question is phase 1's encoding of Q: enc(Q), Q under the relation
// encoder, and the early link when the masked relation query was encoded
// with Q.
type question struct {
	vec    []float32         // enc(Q)
	relvec *chanio.RelVector // Q under the relation encoder; vec without one of its own
	early  *earlyLink
	// enc is Q as the question encoder encoded it, which gives the masked
	// question of any mentions; nil without one
	enc scoring.EncodedQuestion
}

// earlyLink is what a masked relation query lets the request read before
// it encodes Q: Q's link candidates (one round trip, which linking then
// reuses) and the masked question of their resolution without context,
// encoded in the same call as Q. Context (enc(Q)) rarely changes which
// spans are linked; when it does, the relation query is encoded again.
type earlyLink struct {
	toks     []kg.Token
	spans    []kg.SpanCandidates
	mentions []kg.Mention // their resolution without context
	masked   string
	vec      []float32 // enc(masked), nil when masked is not encoded
}

// encodeQuestion is enc(Q), Q under the relation encoder and, for a request
// whose graph channel matches relations against the masked question (with
// the context linker over a graph that lists candidates), the early link
// and its masked question, encoded together with Q. onMasked, when not
// nil, is called with the early link once its masked question is encoded
// by a relation encoder of its own, while enc(Q) may still be running, and
// with Q under the relation encoder as the question will hold it.
func (l linker) encodeQuestion(ctx context.Context, onMasked func(*earlyLink, *chanio.RelVector)) (question, error) {
	if l.questions != nil {
		return l.encodeQuestionProjected(ctx)
	}
	if !l.ownRelEncoder {
		return l.encodeQuestionOnce(ctx)
	}
	// enc(Q) needs no link candidates: it runs while they are read (a
	// round trip on Neo4j) and while the relation encoder takes Q and the
	// masked Q. The batches are the same as when run one after the other.
	type encoded struct {
		vecs [][]float32
		err  error
	}
	qc := make(chan encoded, 1)
	go func() {
		vecs, err := l.encoder.Encode(ctx, []string{l.query})
		qc <- encoded{vecs, err}
	}()
	el, err := l.earlyLink(ctx)
	if err != nil {
		return question{}, err
	}
	// With a masked question the relation encoder takes it alone: the
	// channel reads it, and Q itself only where it does not (RelVector).
	texts, masked := l.questionTexts(el)
	if masked {
		texts = texts[1:]
	}
	rel, relErr := l.encodeRelationQuestion(ctx, texts)
	var relvec *chanio.RelVector
	if relErr == nil && masked {
		// The relation encoder is done before enc(Q) is: what needs the
		// masked question alone starts now.
		el.vec, relvec = rel[0], l.lazyRelation()
		if onMasked != nil {
			onMasked(el, relvec)
		}
	}
	q := <-qc
	if q.err != nil {
		return question{}, fmt.Errorf("encode query: %w", q.err)
	}
	if relErr != nil {
		return question{}, relErr
	}
	if !masked {
		return question{vec: q.vecs[0], relvec: chanio.Encoded(rel[0]), early: el}, nil
	}
	return question{vec: q.vecs[0], relvec: relvec, early: el}, nil
}

// encodeQuestionProjected encodes Q once with the question encoder while
// the early link's candidates are read; Q under the relation encoder is
// projected from the same call, and so later is the masked question of the
// mentions linking keeps (relationQuery).
func (l linker) encodeQuestionProjected(ctx context.Context) (question, error) {
	type encoded struct {
		q   scoring.EncodedQuestion
		err error
	}
	qc := make(chan encoded, 1)
	go func() {
		q, err := l.questions.EncodeQuestion(ctx, l.query)
		qc <- encoded{q, err}
	}()
	el, err := l.earlyLink(ctx)
	if err != nil {
		return question{}, err
	}
	q := <-qc
	if q.err != nil {
		return question{}, fmt.Errorf("encode query: %w", q.err)
	}
	relvec, err := l.projected(ctx, q.q)
	if err != nil {
		return question{}, err
	}
	return question{vec: q.q.Vector(), relvec: chanio.Encoded(relvec), early: el, enc: q.q}, nil
}

// lazyRelation is Q under the relation encoder, encoded when first read.
func (l linker) lazyRelation() *chanio.RelVector { return chanio.Lazy(l.relationOfQ) }

// relationOfQ encodes Q alone with the relation encoder.
func (l linker) relationOfQ(ctx context.Context) ([]float32, error) {
	vs, err := l.encodeRelationQuestion(ctx, []string{l.query})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// projected is Q under the relation encoder, projected from q, or encoded
// by the relation encoder where the projection cannot give it.
func (l linker) projected(ctx context.Context, q scoring.EncodedQuestion) ([]float32, error) {
	v, ok, err := q.Relation(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("project the relation query: %w", err)
	}
	if ok {
		return v, nil
	}
	return l.relationOfQ(ctx)
}

// encodeQuestionOnce encodes Q and the masked Q in one call of the one
// encoder there is (no relation encoder configured).
func (l linker) encodeQuestionOnce(ctx context.Context) (question, error) {
	el, err := l.earlyLink(ctx)
	if err != nil {
		return question{}, err
	}
	texts, masked := l.questionTexts(el)
	vecs, err := l.encoder.Encode(ctx, texts)
	if err != nil {
		return question{}, fmt.Errorf("encode query: %w", err)
	}
	if masked {
		el.vec = vecs[1]
	}
	return question{vec: vecs[0], relvec: chanio.Encoded(vecs[0]), early: el}, nil
}

// encodeWalkQuestion is enc(Q) and Q under the relation encoder, without
// the early link: projected by the question encoder where there is one,
// else encoded when first read (a masked channel may never read it).
func (l linker) encodeWalkQuestion(ctx context.Context) (question, error) {
	if l.questions != nil {
		q, err := l.questions.EncodeQuestion(ctx, l.query)
		if err != nil {
			return question{}, fmt.Errorf("encode query: %w", err)
		}
		relvec, err := l.projected(ctx, q)
		return question{vec: q.Vector(), relvec: chanio.Encoded(relvec), enc: q}, err
	}
	vecs, err := l.encoder.Encode(ctx, []string{l.query})
	if err != nil {
		return question{}, fmt.Errorf("encode query: %w", err)
	}
	q := question{vec: vecs[0], relvec: chanio.Encoded(vecs[0])}
	if l.ownRelEncoder {
		q.relvec = l.lazyRelation()
	}
	return q, nil
}

// questionTexts are Q and, when the early link masked something, the
// masked Q.
func (l linker) questionTexts(el *earlyLink) ([]string, bool) {
	texts := []string{l.query}
	masked := el != nil && el.masked != "" && el.masked != strings.TrimSpace(l.query)
	if masked {
		texts = append(texts, el.masked)
	}
	return texts, masked
}

// earlyLink reads Q's link candidates before Q is encoded when the request
// will encode its masked question; nil otherwise, or when reading them
// failed (linking then asks again and handles the error).
func (l linker) earlyLink(ctx context.Context) (*earlyLink, error) {
	cl, ok := l.graph.(kg.CandidateLinker)
	if !ok || !l.masked || l.Linking != "context" {
		return nil, nil
	}
	toks, spans, err := cl.LinkCandidates(ctx, l.query)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, nil
	}
	ms := kg.ResolveConfident(l.query, toks, spans, nil, kg.DefaultConfidenceParams())
	return &earlyLink{toks: toks, spans: spans, mentions: ms, masked: kgchan.MaskMentions(l.query, ms)}, nil
}

// relationEncoder is the encoder of the relation texts and the question
// they are compared with.
func (p *Pipeline) relationEncoder() scoring.Encoder {
	if p.cfg.RelationEncoder != nil {
		return p.cfg.RelationEncoder
	}
	return p.cfg.Encoder
}

// questions is the question encoder when there is a relation encoder of
// its own to project to, else nil.
func (p *Pipeline) questions() scoring.QuestionEncoder {
	if p.cfg.RelationEncoder == nil {
		return nil
	}
	return p.cfg.Questions
}

// encodeRelationQuestion encodes texts (Q first) with the relation encoder.
func (l linker) encodeRelationQuestion(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := l.relEncoder.Encode(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("encode the relation query: %w", err)
	}
	return vs, nil
}

// candidates are the early link's candidates; ok is false without one.
func (el *earlyLink) candidates() (toks []kg.Token, spans []kg.SpanCandidates, ok bool) {
	if el == nil {
		return nil, nil, false
	}
	return el.toks, el.spans, true
}

// relationQuery is the graph channel's relation query for mentions when
// phase 1 gives it: projected from Q's own encoding, or the early link's
// masked question encoded with Q; nil otherwise (the channel encodes it).
func (q question) relationQuery(ctx context.Context, l linker, mentions []kg.Mention) *kgchan.RelationPrefetch {
	if q.enc == nil || !l.masked {
		return q.early.relationQuery(l.query, mentions)
	}
	masked := kgchan.MaskMentions(l.query, mentions)
	if masked == "" || masked == strings.TrimSpace(l.query) {
		v, err := q.relvec.Get(ctx)
		return kgchan.Encoded(mentions, v, err)
	}
	v, ok, err := q.enc.Relation(ctx, kgchan.MentionSpans(l.query, mentions))
	if !ok && err == nil {
		return nil
	}
	if err != nil {
		err = fmt.Errorf("project the relation query: %w", err)
	}
	return kgchan.Encoded(mentions, v, err)
}

// relationQuery is the relation query of mentions when the early link
// encoded it (its masked question is theirs), else nil.
func (el *earlyLink) relationQuery(query string, mentions []kg.Mention) *kgchan.RelationPrefetch {
	if el == nil || el.vec == nil || kgchan.MaskMentions(query, mentions) != el.masked {
		return nil
	}
	return kgchan.Encoded(mentions, el.vec, nil)
}
