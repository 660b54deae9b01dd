package pipeline

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// What the KG's relation cosines read. Path relevance compares Q with the
// relation texts on a path, under the relation encoder (Config.
// RelationEncoder, or the encoder). With graph_relation_query masked the
// graph channel compares them with Q without its linked mentions instead:
// the names in Q pull enc(Q) towards the entities' own topics ("what is
// the nationality of georgius agricola": mining, science) rather than
// towards what Q asks of them; the document cosine still reads enc(Q).
// docs/method.md.

// question is phase 1's encoding of Q: enc(Q), Q under the relation
// encoder, and the early link when the masked relation query was encoded
// with Q.
type question struct {
	vec    []float32 // enc(Q)
	relvec []float32 // Q under the relation encoder; vec without one of its own
	early  *earlyLink
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

// encodeQuestion is enc(Q), Q under the relation encoder and, for a request
// whose graph channel matches relations against the masked question (with
// the context linker over a graph that lists candidates), the early link
// and its masked question, encoded together with Q.
func (r request) encodeQuestion(ctx context.Context) (question, error) {
	if r.p.cfg.RelationEncoder == nil {
		return r.encodeQuestionOnce(ctx)
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
		vecs, err := r.p.cfg.Encoder.Encode(ctx, []string{r.query})
		qc <- encoded{vecs, err}
	}()
	el, err := r.earlyLink(ctx)
	if err != nil {
		return question{}, err
	}
	texts, masked := r.questionTexts(el)
	rel, relErr := r.encodeRelationQuestion(ctx, texts)
	q := <-qc
	if q.err != nil {
		return question{}, fmt.Errorf("encode query: %w", q.err)
	}
	if relErr != nil {
		return question{}, relErr
	}
	if masked {
		el.vec = rel[1]
	}
	return question{vec: q.vecs[0], relvec: rel[0], early: el}, nil
}

// encodeQuestionOnce encodes Q and the masked Q in one call of the one
// encoder there is (no relation encoder configured).
func (r request) encodeQuestionOnce(ctx context.Context) (question, error) {
	el, err := r.earlyLink(ctx)
	if err != nil {
		return question{}, err
	}
	texts, masked := r.questionTexts(el)
	vecs, err := r.p.cfg.Encoder.Encode(ctx, texts)
	if err != nil {
		return question{}, fmt.Errorf("encode query: %w", err)
	}
	if masked {
		el.vec = vecs[1]
	}
	return question{vec: vecs[0], relvec: vecs[0], early: el}, nil
}

// questionTexts are Q and, when the early link masked something, the
// masked Q.
func (r request) questionTexts(el *earlyLink) ([]string, bool) {
	texts := []string{r.query}
	masked := el != nil && el.masked != "" && el.masked != strings.TrimSpace(r.query)
	if masked {
		texts = append(texts, el.masked)
	}
	return texts, masked
}

// earlyLink reads Q's link candidates before Q is encoded when the request
// will encode its masked question; nil otherwise, or when reading them
// failed (linking then asks again and handles the error).
func (r request) earlyLink(ctx context.Context) (*earlyLink, error) {
	o := r.opts
	cl, ok := r.p.cfg.Graph.(kg.CandidateLinker)
	if !ok || o.GraphRecall == 0 || o.GraphRelationQuery != "masked" || o.Linking != "context" {
		return nil, nil
	}
	toks, spans, err := cl.LinkCandidates(ctx, r.query)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, nil
	}
	return &earlyLink{toks: toks, spans: spans, masked: maskMentions(r.query, kg.ResolveConfident(r.query, toks, spans, nil, kg.DefaultConfidenceParams()))}, nil
}

// relationEncoder is the encoder of the relation texts and the question
// they are compared with.
func (p *Pipeline) relationEncoder() scoring.Encoder {
	if p.cfg.RelationEncoder != nil {
		return p.cfg.RelationEncoder
	}
	return p.cfg.Encoder
}

// encodeRelationQuestion encodes texts (Q first) with the relation encoder.
func (r request) encodeRelationQuestion(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := r.p.relationEncoder().Encode(ctx, texts)
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

// prefetchRelationQuery is the graph channel's relation query for Q's
// mentions, taken from the early link or started encoding now; nil when
// the request needs none before its channel runs.
func (r request) prefetchRelationQuery(ctx context.Context, q question, mentions []kg.Mention) *relationPrefetch {
	if pf := q.early.relationQuery(r.query, mentions); pf != nil {
		return pf
	}
	if r.opts.GraphRecall == 0 || r.opts.GraphRelationQuery != "masked" {
		return nil
	}
	pf := &relationPrefetch{mentions: mentions, done: make(chan struct{})}
	go func() {
		defer close(pf.done)
		pf.vec, pf.err = r.relationQuery(ctx, q.relvec, mentions)
	}()
	return pf
}

// relationQueryOf is relationQuery, taken from pf when pf was started for
// the same mentions.
func (r request) relationQueryOf(ctx context.Context, pf *relationPrefetch, relvec []float32, mentions []kg.Mention) ([]float32, error) {
	if pf == nil || !slices.Equal(pf.mentions, mentions) {
		return r.relationQuery(ctx, relvec, mentions)
	}
	select {
	case <-pf.done:
		return pf.vec, pf.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// relationQuery is the vector the channel's relation cosines read: relvec,
// or with masked the encoding of Q with mentions cut out (relvec when
// nothing is left or nothing was linked).
func (r request) relationQuery(ctx context.Context, relvec []float32, mentions []kg.Mention) ([]float32, error) {
	if r.opts.GraphRelationQuery != "masked" {
		return relvec, nil
	}
	q := maskMentions(r.query, mentions)
	if q == "" || q == strings.TrimSpace(r.query) {
		return relvec, nil
	}
	vs, err := r.p.relationEncoder().Encode(ctx, []string{q})
	if err != nil {
		return nil, fmt.Errorf("encode the relation query: %w", err)
	}
	return vs[0], nil
}

// stepPrior is the learned relation prior for Q (relvec) weighted as the
// pipeline was composed with it (WithPathPrior: dmar eval's -pX variants),
// or nil when it was not, or no prior model is loaded (then path relevance
// is the cosine alone, and the response says so). A model failure fails
// the request, as any model failure does.
func (r request) stepPrior(ctx context.Context, relvec []float32) (map[pathrel.StepKey]float64, error) {
	w := r.p.pathPrior
	if w == 0 {
		return nil, nil
	}
	if r.p.cfg.RelPrior == nil {
		if !r.trace.hasFallback("path_prior_unavailable") {
			r.trace.fallback("path_prior_unavailable", "no relation prior model is loaded: path relevance is the cosine alone")
		}
		return nil, nil
	}
	pr, err := r.p.cfg.RelPrior.Prior(ctx, relvec)
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
