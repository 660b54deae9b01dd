package pipeline_test

import (
	"context"
	"math"
	"reflect"
	"sync"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// ruleGate is a test double for the evidence-aware gate: alpha 0.2 for a
// document the graph channel reached, 0.9 otherwise; it records what it saw.
type ruleGate struct {
	mu   sync.Mutex
	seen []scoring.Evidence
}

func (*ruleGate) Version() string { return "test-rule-gate" }
func (g *ruleGate) EvidenceWeights(ctx context.Context, docs []scoring.Evidence) ([][2]float64, error) {
	g.mu.Lock()
	g.seen = append(g.seen, docs...)
	g.mu.Unlock()
	out := make([][2]float64, len(docs))
	for i, d := range docs {
		a := 0.9
		if d.Reached {
			a = 0.2
		}
		out[i] = [2]float64{a, 1 - a}
	}
	return out, ctx.Err()
}

func evidenceOptions(p *pipeline.Pipeline) pipeline.Options {
	o := p.Defaults().QuestionAware().WithPaperStages() // the gate weighs the structural score
	o.Gate = "evidence"
	return o
}

// gate=evidence takes each document's weights from the evidence gate, which
// sees the document's z-scores, whether the graph channel reached it and the
// query's link confidences.
func TestEvidenceGateWeighsEachDocumentByItsEvidence(t *testing.T) {
	g := &ruleGate{}
	p := newPipeline(t, func(c *pipeline.Config) { c.EvidenceGate = g })
	res, err := p.Retrieve(context.Background(), nolan, evidenceOptions(p))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.seen) == 0 {
		t.Fatal("the evidence gate was never asked")
	}
	reached, other := 0, 0
	for _, d := range res.Results {
		want := 0.9
		if d.Breakdown.Graph != nil {
			want, reached = 0.2, reached+1
		} else {
			other++
		}
		if w := d.Breakdown.Gate; w.Semantic != want || math.Abs(w.Semantic+w.Structural-1) > 1e-12 {
			t.Errorf("%s (graph %v): gate %+v, want alpha %.1f", d.ID, d.Breakdown.Graph != nil, w, want)
		}
	}
	if reached == 0 {
		t.Fatalf("no result came through the graph channel: the test does not reach the rule's two sides")
	}
	var sum float64
	for _, e := range res.QueryEntities {
		sum += e.Confidence
	}
	mean := sum / float64(len(res.QueryEntities))
	for _, e := range g.seen {
		if e.Linked != len(res.QueryEntities) || math.Abs(e.LinkConfMean-mean) > 1e-12 || e.LinkConfMin > e.LinkConfMean {
			t.Fatalf("evidence %+v; query entities %+v", e, res.QueryEntities)
		}
		if e.Reached != (e.PathRelevance != 0) && e.PathRelevance != 0 {
			t.Fatalf("path relevance %v for a document the channel did not reach", e.PathRelevance)
		}
		if e.EntNonzeroShare < 0 || e.EntNonzeroShare > 1 {
			t.Fatalf("ent nonzero share %v", e.EntNonzeroShare)
		}
	}
	if n := len(scoring.Evidence{}.Vector()); n != len(scoring.EvidenceFeatures) {
		t.Fatalf("Evidence.Vector has %d columns, EvidenceFeatures names %d", n, len(scoring.EvidenceFeatures))
	}
}

// Without an evidence gate model, gate=evidence falls back to the fixed
// weights and says so; the other gate options never ask it.
func TestEvidenceGateFallbackAndIsolation(t *testing.T) {
	p := newPipeline(t, nil)
	o := evidenceOptions(p)
	res, err := p.Retrieve(context.Background(), nolan, o)
	if err != nil {
		t.Fatal(err)
	}
	if !hasFallback(res, "evidence_gate_unavailable") {
		t.Fatalf("fallbacks = %v, want evidence_gate_unavailable", fallbackNames(res))
	}
	for _, d := range res.Results {
		if d.Breakdown.Gate.Semantic != o.FixedAlpha {
			t.Fatalf("%s: gate %+v, want the fixed %.2f", d.ID, d.Breakdown.Gate, o.FixedAlpha)
		}
	}
	g := &ruleGate{}
	withGate := newPipeline(t, func(c *pipeline.Config) { c.EvidenceGate = g })
	a, err := p.Retrieve(context.Background(), nolan, p.Defaults().QuestionAware().WithPaperStages())
	if err != nil {
		t.Fatal(err)
	}
	b, err := withGate.Retrieve(context.Background(), nolan, p.Defaults().QuestionAware().WithPaperStages())
	if err != nil {
		t.Fatal(err)
	}
	a.TimingsMS, b.TimingsMS = nil, nil
	if !reflect.DeepEqual(a, b) || len(g.seen) != 0 {
		t.Fatalf("a configured evidence gate changed gate=learned's answer (asked %d times)", len(g.seen))
	}
}

// RetrieveEvidence answers as Retrieve does and returns every scored
// candidate of both stages with its evidence and the graph offset the
// pipeline adds, which the training loss needs.
func TestRetrieveEvidenceRows(t *testing.T) {
	p := newPipeline(t, func(c *pipeline.Config) { c.EvidenceGate = &ruleGate{} })
	o := evidenceOptions(p)
	res, rows, err := p.RetrieveEvidence(context.Background(), nolan, o)
	if err != nil {
		t.Fatal(err)
	}
	answersAsRetrieve(t, p, nolan, o, res, "RetrieveEvidence")
	byStage := map[string]map[string]pipeline.EvidenceRow{}
	for _, r := range rows {
		if byStage[r.Stage] == nil {
			byStage[r.Stage] = map[string]pipeline.EvidenceRow{}
		}
		byStage[r.Stage][r.ID] = r
	}
	if len(byStage["first"]) == 0 || len(byStage["second"]) == 0 {
		t.Fatalf("rows per stage: first %d, second %d", len(byStage["first"]), len(byStage["second"]))
	}
	for _, d := range res.Results {
		r, ok := byStage["second"][d.ID]
		if !ok {
			t.Fatalf("result %s has no second-stage row", d.ID)
		}
		b := d.Breakdown
		if r.Evidence.ZSemantic != b.ZSemantic || r.Evidence.ZStructural != b.ZStructural || r.Evidence.Structural != b.Structural {
			t.Fatalf("%s: row %+v, breakdown %+v", d.ID, r.Evidence, b)
		}
		wantOff := 0.0
		if b.Graph != nil {
			wantOff = o.GraphBoost * b.Graph.Score
		}
		// The ranking score is the fused score plus the offset.
		fused := b.Gate.Semantic*b.ZSemantic + b.Gate.Structural*b.ZStructural
		if r.Offset != wantOff || math.Abs(d.Score-fused-r.Offset) > 1e-9 {
			t.Fatalf("%s: offset %v (want %v), score %v, fused %v", d.ID, r.Offset, wantOff, d.Score, fused)
		}
	}
}
