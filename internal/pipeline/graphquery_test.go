package pipeline_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
	"github.com/dmar-kg/dmar/internal/vec"
)

// graph_relation_query masked: the channel's relation cosines read enc(Q
// without its linked mentions); the default reads enc(Q).
func TestGraphRelationQueryMasked(t *testing.T) {
	p := newPipeline(t, nil)
	o := p.Defaults()
	o.GraphRecall, o.K, o.P = 1, 10, 20
	enc := func(s string) []float32 {
		v, err := scoringtest.Words{}.Encode(context.Background(), []string{s})
		if err != nil {
			t.Fatal(err)
		}
		return v[0]
	}
	check := func(o2 string, query string) {
		t.Helper()
		o.GraphRelationQuery = o2
		res := walk(t, p, o)
		if len(res.QueryEntities) != 1 || res.QueryEntities[0].Surface != "Christopher Nolan" {
			t.Fatalf("linked %+v, want Christopher Nolan alone", res.QueryEntities)
		}
		qv, checked := enc(query), 0
		for _, d := range res.Results {
			st := d.Breakdown.Graph.Steps
			if len(st) != 1 {
				continue
			}
			want := vec.Cosine64(qv, enc(pathrel.Text(st[0].Label, st[0].PID, false)))
			if math.Abs(st[0].Relevance-want) > 1e-9 {
				t.Errorf("%q: %s relevance %v, want cos(enc(%q), relation) %v", o2, d.Breakdown.Graph.Path, st[0].Relevance, query, want)
			}
			checked++
		}
		if checked == 0 {
			t.Fatalf("%q: no one-hop result to check", o2)
		}
	}
	check("", nolan)
	check("question", nolan)
	check("masked", "Which films did direct?")
	o.GraphRelationQuery = "names"
	if _, err := p.GraphWalk(context.Background(), nolan, o); err == nil {
		t.Fatal(`graph_relation_query "names" was accepted`)
	}
}

// maskedAway encodes the masked nolan question as -enc(nolan), so that every
// relation's masked cosine is the negative of its plain one and a path
// explanation scored against enc(Q) would outrank the channel's.
type maskedAway struct{ scoringtest.Words }

const maskedNolan = "Which films did direct?"

func (m maskedAway) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		q := s
		if s == maskedNolan {
			q = nolan
		}
		v, err := m.Words.Encode(ctx, []string{q})
		if err != nil {
			return nil, err
		}
		if s == maskedNolan {
			for j := range v[0] {
				v[0][j] = -v[0][j]
			}
		}
		out[i] = v[0]
	}
	return out, nil
}

// With masked, the paths the results name (from G_Q's subgraphs too) are
// scored as the channel scores them: against the masked question.
func TestGraphRelationQueryMaskedNamesPathsAlike(t *testing.T) {
	ctx := context.Background()
	enc := maskedAway{}
	p := newPipeline(t, func(c *pipeline.Config) { c.Encoder = enc })
	o := p.Defaults().QuestionAware()
	o.GraphRelationQuery = "masked"
	res, err := p.Retrieve(ctx, nolan, o)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := enc.Encode(ctx, []string{maskedNolan})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, d := range res.Results {
		for _, np := range d.Breakdown.Paths {
			for _, st := range np.Steps {
				tv, err := enc.Encode(ctx, []string{pathrel.Text(st.Label, st.PID, false)})
				if err != nil {
					t.Fatal(err)
				}
				if want := vec.Cosine64(vs[0], tv[0]); math.Abs(st.Relevance-want) > 1e-9 {
					t.Errorf("%s: %s step %s relevance %v, want %v (the masked question's)", d.ID, np.Path, st.PID, st.Relevance, want)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no named path to check")
	}
}

// recordingEncoder is scoringtest.Words that records each call's texts.
type recordingEncoder struct {
	scoringtest.Words
	mu    sync.Mutex
	calls [][]string
}

func (e *recordingEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.calls = append(e.calls, append([]string(nil), texts...))
	e.mu.Unlock()
	return e.Words.Encode(ctx, texts)
}

// The question-aware retrieval encodes its masked question in the same
// call as Q (the link candidates are read first), and its paths are scored
// against that masked question, as when it is encoded on its own.
func TestMaskedQuestionEncodedWithQ(t *testing.T) {
	enc := &recordingEncoder{}
	p := newPipeline(t, func(c *pipeline.Config) { c.Encoder = enc })
	o := p.Defaults().QuestionAware()
	o.K, o.P = 10, 20
	if _, err := p.Retrieve(context.Background(), nolan, o); err != nil { // the relation texts' cache fills
		t.Fatal(err)
	}
	enc.calls = nil
	res := retrieve(t, p, nolan, o)
	if len(enc.calls) != 1 || !slices.Equal(enc.calls[0], []string{nolan, maskedNolan}) {
		t.Fatalf("encoder calls %q, want one of Q and the masked question", enc.calls)
	}
	qv, err := scoringtest.Words{}.Encode(context.Background(), []string{maskedNolan})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, d := range res.Results {
		if d.Breakdown.Graph == nil || len(d.Breakdown.Graph.Steps) != 1 {
			continue
		}
		st := d.Breakdown.Graph.Steps[0]
		rv, _ := scoringtest.Words{}.Encode(context.Background(), []string{pathrel.Text(st.Label, st.PID, false)})
		if want := vec.Cosine64(qv[0], rv[0]); math.Abs(st.Relevance-want) > 1e-9 {
			t.Errorf("%s relevance %v, want cos(enc(masked Q), relation) %v", d.Breakdown.Graph.Path, st.Relevance, want)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no one-hop result to check")
	}
}

// otherEncoder is a second deterministic encoder: scoringtest.Words' vectors of
// the text with every word salted, so its cosines differ from its.
type otherEncoder struct{ recordingEncoder }

func (*otherEncoder) Version() string { return "test-other-encoder" }
func (e *otherEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	salted := make([]string, len(texts))
	for i, s := range texts {
		for _, w := range strings.Fields(s) {
			salted[i] += w + "~ " + w + "# "
		}
	}
	if _, err := e.recordingEncoder.Encode(ctx, texts); err != nil { // records the texts
		return nil, err
	}
	return scoringtest.Words{}.Encode(ctx, salted)
}

// With a relation encoder of its own (models.relation_encoder), every path
// relevance a response shows is the relation encoder's cosine of the
// question (masked, as the channel reads it) and the relation text, on the
// channel's paths and on the named paths alike, in Retrieve and GraphWalk;
// the retrieval encoder never sees a relation text.
func TestRelationEncoderScoresPaths(t *testing.T) {
	ctx := context.Background()
	main, rel := &recordingEncoder{}, &otherEncoder{}
	p := newPipeline(t, func(c *pipeline.Config) { c.Encoder, c.RelationEncoder = main, rel })
	relCos := func(q string, st pathrel.Step) float64 {
		vs, err := (&otherEncoder{}).Encode(ctx, []string{q, pathrel.Text(st.Label, st.PID, false)})
		if err != nil {
			t.Fatal(err)
		}
		return vec.Cosine64(vs[0], vs[1])
	}
	checked, differs := 0, 0
	for _, mode := range []string{"masked", "question"} {
		o := p.Defaults().QuestionAware()
		o.K, o.P, o.GraphRelationQuery = 10, 20, mode
		q := map[string]string{"masked": maskedNolan, "question": nolan}[mode]
		res, err := p.Retrieve(ctx, nolan, o)
		if err != nil {
			t.Fatal(err)
		}
		walked, err := p.GraphWalk(ctx, nolan, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []*pipeline.Result{res, walked} {
			for _, d := range r.Results {
				var steps []pathrel.Step
				if g := d.Breakdown.Graph; g != nil {
					steps = append(steps, g.Steps...)
				}
				for _, np := range d.Breakdown.Paths {
					steps = append(steps, np.Steps...)
				}
				for _, st := range steps {
					want := relCos(q, st)
					if math.Abs(st.Relevance-want) > 1e-9 {
						t.Errorf("%s: %s: step %s relevance %v, want the relation encoder's %v", mode, d.ID, st.PID, st.Relevance, want)
					}
					mv, _ := scoringtest.Words{}.Encode(ctx, []string{q, pathrel.Text(st.Label, st.PID, false)})
					if math.Abs(vec.Cosine64(mv[0], mv[1])-want) > 1e-6 {
						differs++
					}
					checked++
				}
			}
		}
	}
	if checked == 0 || differs == 0 {
		t.Fatalf("%d steps checked, %d where the two encoders differ: nothing tells them apart", checked, differs)
	}
	for _, call := range main.calls {
		for _, s := range call {
			if s != nolan {
				t.Errorf("the retrieval encoder encoded %q; it should see only Q", s)
			}
		}
	}
	if len(rel.calls) == 0 {
		t.Fatal("the relation encoder was never called")
	}
}

// walk is the graph channel alone on nolan with o.
func walk(t *testing.T, p *pipeline.Pipeline, o pipeline.Options) *pipeline.Result {
	t.Helper()
	res := answer(t, p.GraphWalk, nolan, o)
	return res
}

// projectingQuestions is a question encoder (pipeline.Config.Questions)
// that gives Q's vector as scoringtest.Words does and its relation vectors
// as otherEncoder encodes the question with the spans cut: what a faithful
// projection would give.
type projectingQuestions struct {
	mu    sync.Mutex
	calls []string
}

func (q *projectingQuestions) EncodeQuestion(ctx context.Context, text string) (scoring.EncodedQuestion, error) {
	q.mu.Lock()
	q.calls = append(q.calls, text)
	q.mu.Unlock()
	v, err := scoringtest.Words{}.Encode(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return projected{text: text, vec: v[0]}, nil
}

type projected struct {
	text string
	vec  []float32
}

func (p projected) Vector() []float32 { return p.vec }

func (p projected) Relation(ctx context.Context, leaveOut []scoring.Span) ([]float32, bool, error) {
	s := p.text
	for i := len(leaveOut) - 1; i >= 0; i-- {
		s = s[:leaveOut[i].Start] + " " + s[leaveOut[i].End:]
	}
	vs, err := (&otherEncoder{}).Encode(ctx, []string{strings.Join(strings.Fields(s), " ")})
	if err != nil {
		return nil, false, err
	}
	return vs[0], true, nil
}

// With a question encoder, Q is encoded once: neither the retrieval
// encoder nor the relation encoder sees Q or its masked question, and a
// faithful projection ranks and explains exactly as the two encoders do, in
// Retrieve and in GraphWalk.
func TestQuestionEncoderProjectsRelationQueries(t *testing.T) {
	ctx := context.Background()
	main, rel, qe := &recordingEncoder{}, &otherEncoder{}, &projectingQuestions{}
	p := newPipeline(t, func(c *pipeline.Config) { c.Encoder, c.RelationEncoder, c.Questions = main, rel, qe })
	ref := newPipeline(t, func(c *pipeline.Config) { c.Encoder, c.RelationEncoder = &recordingEncoder{}, &otherEncoder{} })
	o := p.Defaults().QuestionAware()
	o.K, o.P, o.GraphRelationQuery = 10, 20, "masked"
	for _, run := range []struct {
		name string
		f    func(*pipeline.Pipeline) (*pipeline.Result, error)
	}{
		{"Retrieve", func(p *pipeline.Pipeline) (*pipeline.Result, error) { return p.Retrieve(ctx, nolan, o) }},
		{"GraphWalk", func(p *pipeline.Pipeline) (*pipeline.Result, error) { return p.GraphWalk(ctx, nolan, o) }},
	} {
		var res [2]*pipeline.Result
		for i, pp := range []*pipeline.Pipeline{p, ref} {
			r, err := run.f(pp)
			if err != nil {
				t.Fatal(err)
			}
			res[i] = r
		}
		got, want := res[0], res[1]
		if len(got.Results) == 0 || len(got.Results) != len(want.Results) {
			t.Fatalf("%s: %d results, want %d (and some)", run.name, len(got.Results), len(want.Results))
		}
		steps := 0
		for i, d := range got.Results {
			w := want.Results[i]
			if d.ID != w.ID || math.Abs(d.Score-w.Score) > 1e-9 {
				t.Errorf("%s: result %d is %s (%v), want %s (%v) as with the two encoders", run.name, i, d.ID, d.Score, w.ID, w.Score)
			}
			if g := d.Breakdown.Graph; g != nil {
				for j, st := range g.Steps {
					steps++
					if ws := w.Breakdown.Graph.Steps[j]; math.Abs(st.Relevance-ws.Relevance) > 1e-9 {
						t.Errorf("%s: %s step %s relevance %v, want %v", run.name, d.ID, st.PID, st.Relevance, ws.Relevance)
					}
				}
			}
		}
		if steps == 0 {
			t.Fatalf("%s: no graph step to compare", run.name)
		}
	}
	if len(qe.calls) != 2 {
		t.Errorf("question encoder calls %q, want Q once a request", qe.calls)
	}
	for _, calls := range [][][]string{main.calls, rel.calls} {
		for _, call := range calls {
			for _, s := range call {
				if s == nolan || s == maskedNolan {
					t.Errorf("an encoder encoded %q: the question encoder encodes the question", s)
				}
			}
		}
	}
}

// With a relation encoder of its own and the masked relation query, the
// relation encoder encodes the masked question alone: the channel reads it,
// and nothing reads Q under the relation encoder when it walked.
func TestRelationEncoderTakesTheMaskedQuestionAlone(t *testing.T) {
	ctx := context.Background()
	rel := &otherEncoder{}
	p := newPipeline(t, func(c *pipeline.Config) { c.Encoder, c.RelationEncoder = &recordingEncoder{}, rel })
	o := p.Defaults().QuestionAware()
	o.K, o.P, o.GraphRelationQuery = 10, 20, "masked"
	if _, err := p.Retrieve(ctx, nolan, o); err != nil { // the relation texts' cache fills
		t.Fatal(err)
	}
	rel.calls = nil
	if _, err := p.Retrieve(ctx, nolan, o); err != nil {
		t.Fatal(err)
	}
	if len(rel.calls) != 1 || !slices.Equal(rel.calls[0], []string{maskedNolan}) {
		t.Errorf("relation encoder calls %q, want one of the masked question alone", rel.calls)
	}
}
