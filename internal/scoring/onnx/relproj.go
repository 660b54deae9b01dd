package onnx

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/dmar-kg/dmar/internal/scoring"
)

// RelProjectionModelFile is the committed relation projection's path inside
// the repository (models/relproj/train.py writes it), looked up from the
// working directory up when configured so.
const RelProjectionModelFile = "models/relproj/relproj.onnx"

// RelProjection maps a question as the encoder read it into the relation
// encoder's space: a linear map, learned by distillation
// (models/relproj/README.md), of the question's features (Features) to a
// unit vector. It takes "features" [B,2d] (d: the encoder's width) and
// gives "relvec" [B,r]; its metadata names the encoder whose states it
// reads ("encoder") and the relation encoder it imitates ("target"). Safe
// for concurrent use.
type RelProjection struct {
	sess    *Session
	in, out int
	encoder string
	target  string
	version string
}

// NewRelProjection loads the projection model at path.
func NewRelProjection(rt *Runtime, path string) (*RelProjection, error) {
	const what = "relation projection"
	version, ins, outs, err := modelFile(path, what, "relproj")
	if err != nil {
		return nil, err
	}
	p := &RelProjection{version: version}
	for _, t := range ins {
		if t.Name == "features" && len(t.Dimensions) == 2 {
			p.in = int(t.Dimensions[1])
		}
	}
	for _, t := range outs {
		if t.Name == "relvec" && len(t.Dimensions) == 2 {
			p.out = int(t.Dimensions[1])
		}
	}
	if p.in <= 0 || p.out <= 0 {
		return nil, fmt.Errorf("%s: %s needs an input \"features\" [B,n] and an output \"relvec\" [B,r]", what, path)
	}
	md, err := metadata(path, what, "encoder", "target")
	if err != nil {
		return nil, err
	}
	if p.encoder, p.target = md["encoder"], md["target"]; p.encoder == "" || p.target == "" {
		return nil, fmt.Errorf("%s: %s lacks the \"encoder\" or \"target\" metadata", what, path)
	}
	if p.sess, err = rt.NewSession(path, []string{"features"}, []string{"relvec"}); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return p, nil
}

// Version is "relproj-" and the start of the model file's SHA-256.
func (p *RelProjection) Version() string { return p.version }

// Encoder is the registry name of the encoder whose states it reads.
func (p *RelProjection) Encoder() string { return p.encoder }

// Target is the registry name of the relation encoder it imitates.
func (p *RelProjection) Target() string { return p.target }

// Close frees the session.
func (p *RelProjection) Close() error { return p.sess.Close() }

// Project maps one question's features to the relation encoder's space.
func (p *RelProjection) Project(ctx context.Context, features []float32) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(features) != p.in {
		return nil, fmt.Errorf("relation projection: %d features, the model takes %d", len(features), p.in)
	}
	return run(p.sess, "relation projection", features, 1, p.in, p.out, slices.Clone[[]float32])
}

// Features are what the projection reads of a question with leaveOut cut:
// its vector (the encoder's pooling of all of it) and the mean of the
// states of its pieces outside leaveOut; ok is false as for Pooled.
func (s *QueryStates) Features(leaveOut []scoring.Span) ([]float32, bool) {
	mean, ok := s.Pooled(leaveOut)
	if !ok {
		return nil, false
	}
	return append(slices.Clone(s.Vector), mean...), true
}

// ProjectionFeatures are the projection's input for text with each of cuts
// cut, from one encoding of text; nil where it cannot be cut (the training
// data's, eval.RelProjectionFeatures).
func (e *Encoder) ProjectionFeatures(ctx context.Context, text string, cuts [][]scoring.Span) ([][]float32, error) {
	st, err := e.EncodeStates(ctx, text)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(cuts))
	for i, c := range cuts {
		out[i], _ = st.Features(c)
	}
	return out, nil
}

// QuestionEncoder encodes a question once (the encoder's token states kept)
// and gives it in the relation encoder's space through the projection, for
// any of its spans left out: one model call where the encoder and the
// relation encoder took one each.
type QuestionEncoder struct {
	enc  *Encoder
	proj *RelProjection
}

var _ scoring.QuestionEncoder = (*QuestionEncoder)(nil)

// NewQuestionEncoder pairs enc with a projection trained on its states
// into the relation encoder rel's space.
func NewQuestionEncoder(enc *Encoder, proj *RelProjection, rel *Encoder) (*QuestionEncoder, error) {
	switch {
	case proj.encoder != enc.spec.Name:
		return nil, fmt.Errorf("relation projection %s reads %s's states, but the encoder is %s", proj.version, proj.encoder, enc.spec.Name)
	case proj.target != rel.spec.Name:
		return nil, fmt.Errorf("relation projection %s imitates %s, but the relation encoder is %s", proj.version, proj.target, rel.spec.Name)
	case proj.in != 2*enc.dim || proj.out != rel.dim:
		return nil, fmt.Errorf("relation projection %s maps %d to %d features; the encoders need %d to %d", proj.version, proj.in, proj.out, 2*enc.dim, rel.dim)
	case enc.spec.Pooling == PoolInGraph:
		return nil, fmt.Errorf("relation projection: encoder %s keeps no token states", enc.spec.Name)
	}
	return &QuestionEncoder{enc: enc, proj: proj}, nil
}

// EncodeQuestion implements scoring.QuestionEncoder.
func (q *QuestionEncoder) EncodeQuestion(ctx context.Context, text string) (scoring.EncodedQuestion, error) {
	st, err := q.enc.EncodeStates(ctx, text)
	if err != nil {
		return nil, err
	}
	return encodedQuestion{st: st, proj: q.proj}, nil
}

type encodedQuestion struct {
	st   *QueryStates
	proj *RelProjection
}

func (e encodedQuestion) Vector() []float32 { return e.st.Vector }

func (e encodedQuestion) Relation(ctx context.Context, leaveOut []scoring.Span) ([]float32, bool, error) {
	f, ok := e.st.Features(leaveOut)
	if !ok {
		return nil, false, nil
	}
	v, err := e.proj.Project(ctx, f)
	return v, err == nil, err
}

// openRelProjection opens the relation projection when the relation
// encoder is configured apart from the encoder: a missing default model,
// or one trained for other encoders, is left off with a warning (the
// relation encoder then encodes the question itself).
func (m *Models) openRelProjection(rt *Runtime, log *slog.Logger) error {
	if m.RelationEncoder == m.Encoder {
		if m.relProjPath != "" {
			log.Warn("relation projection left off: the encoder is also the relation encoder, so a question is encoded once already", "path", m.relProjPath)
		}
		return nil
	}
	const instead = "the relation encoder encodes each question itself (one more model call a request)"
	find := func() string { return findUp(RelProjectionModelFile) }
	path, err := optionalModel(m.relProjPath, RelProjectionModelFile, find, "relation projection model", "relation-projection", instead, log)
	if path == "" || err != nil {
		return err
	}
	p, err := NewRelProjection(rt, path)
	if err != nil {
		return err
	}
	q, err := NewQuestionEncoder(m.Encoder, p, m.RelationEncoder)
	if err != nil {
		p.Close()
		if m.relProjPath != RelProjectionModelFile {
			return err
		}
		log.Warn("the committed relation projection does not fit the encoders; "+instead, "path", path, "err", err)
		return nil
	}
	m.Questions = q
	m.closers = append(m.closers, p.Close)
	log.Info("relation projection loaded", "path", path, "version", p.Version())
	return nil
}
