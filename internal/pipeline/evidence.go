package pipeline

import (
	"context"
	"fmt"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// The evidence-aware gate (option gate=evidence, beyond the paper): the
// fusion weights of each candidate come from scoring.Evidence, what the
// request knows about how well-founded its structural score is, instead of
// from enc(Q) and enc(D) alone (the paper's gate, gate=learned).

// linkConfidence is the confidence of each linked QID: the best of its
// mentions, 1 for mentions without one (the exact linker asserts its links).
func linkConfidence(ms []kg.Mention) map[string]float64 {
	out := make(map[string]float64, len(ms))
	for _, m := range ms {
		c := m.Confidence
		if c == 0 {
			c = 1
		}
		out[m.QID] = max(out[m.QID], c)
	}
	return out
}

// evidence is each hit's scoring.Evidence; sem, ent and their z-scores are
// scoreHits'.
func (sr scorer) evidence(st structure, hits []retrieval.Hit, ch channels, sem, ent, zs, ze []float64) []scoring.Evidence {
	q := scoring.Evidence{Linked: len(st.qsubs), LinkConfMin: 1}
	var confSum float64
	hubs := 0
	for _, e := range st.qsubs {
		c, ok := st.conf[e.sg.Root]
		if !ok {
			c = 1
		}
		confSum += c
		q.LinkConfMin = min(q.LinkConfMin, c)
		if isHub(e) {
			hubs++
		}
	}
	if q.Linked > 0 {
		q.LinkConfMean, q.QueryHubShare = confSum/float64(q.Linked), float64(hubs)/float64(q.Linked)
	} else {
		q.LinkConfMin = 0
	}
	nonzero := 0
	for _, v := range ent {
		if v > 0 {
			nonzero++
		}
	}
	if len(ent) > 0 {
		q.EntNonzeroShare = float64(nonzero) / float64(len(ent))
	}
	out := make([]scoring.Evidence, len(hits))
	for i, h := range hits {
		e := q
		e.ZSemantic, e.ZStructural, e.Semantic, e.Structural = zs[i], ze[i], sem[i], ent[i]
		e.DocEntities = len(h.Doc.Entities)
		for _, id := range h.Doc.Entities {
			if s, ok := st.subs[id]; ok && isHub(s) {
				e.DocHub = true
			}
		}
		if gp, ok := ch.kg.Paths[h.Doc.ID]; ok {
			e.Reached, e.PathRelevance = true, gp.Relevance
		}
		out[i] = e
	}
	return out
}

// isHub says the subgraph's root has a degree above the hub cap.
func isHub(e *entry) bool { return len(e.sg.Nodes) > 0 && e.sg.Nodes[0].Hub }

// evidenceWeights are the evidence-aware gate's weights, or the fixed
// gate's when no such model is loaded (and the response says so).
func (sr scorer) evidenceWeights(ctx context.Context, ev []scoring.Evidence) ([][2]float64, bool, error) {
	g := sr.evGate
	if g == nil {
		if !sr.trace.HasFallback("evidence_gate_unavailable") {
			sr.trace.fallback("evidence_gate_unavailable", fmt.Sprintf("no evidence gate model is configured; fixed weights %.2f/%.2f", sr.FixedAlpha, 1-sr.FixedAlpha))
		}
		return nil, false, nil
	}
	w, err := g.EvidenceWeights(ctx, ev)
	if err != nil {
		return nil, false, fmt.Errorf("evidence gate: %w", err)
	}
	return w, true, nil
}

// EvidenceRow is one scored candidate of one stage, as the evidence-aware
// gate sees it: its training row (dmar gate evidence).
type EvidenceRow struct {
	Stage    string // first | second
	ID       string
	Evidence scoring.Evidence
	// Offset is what the pipeline adds to the fused score (graph_boost x
	// the graph channel's score; 0 for documents it did not reach): the
	// gate is trained on the score the pipeline ranks by.
	Offset float64
}

// evidenceLog collects a request's EvidenceRows (nil: not collected).
type evidenceLog struct{ rows []EvidenceRow }

// record keeps the rows of a stage whose structural path is on (the gate
// is asked only then).
func (sr scorer) record(stage string, docs []Doc, ch channels, ev []scoring.Evidence) {
	if sr.evlog == nil || ev == nil {
		return
	}
	for i, d := range docs {
		sr.evlog.rows = append(sr.evlog.rows, EvidenceRow{Stage: stage, ID: d.ID, Evidence: ev[i], Offset: sr.fuse.offset(ch, d.ID)})
	}
}

// RetrieveEvidence runs Retrieve and also returns every candidate of both
// scoring stages with its Evidence (stages with the structural path off
// have none): the evidence-aware gate's training data.
func (p *Pipeline) RetrieveEvidence(ctx context.Context, query string, opts Options) (*Result, []EvidenceRow, error) {
	log := &evidenceLog{}
	res, err := p.retrieveLogged(ctx, query, opts, log, nil)
	if err != nil {
		return nil, nil, err
	}
	return res, log.rows, nil
}
