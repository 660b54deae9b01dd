package pipeline_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
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
