package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dmar-kg/dmar/internal/npy"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// CandidateSource runs phases 1-2 of DMAR (pipeline.Pipeline satisfies it).
type CandidateSource interface {
	Candidates(ctx context.Context, query string, opts pipeline.Options) ([]pipeline.Doc, *pipeline.Result, error)
	Defaults() pipeline.Options
	Index() retrieval.Index
	Encoder() scoring.Encoder
}

// GateFeatures runs phases 1-2 of p (default options) for every question of
// a labelled dataset and writes the gate's training data under out:
//
//	qvec.npy  [Q,384] float32  enc(Q), the query encoder's vector
//	dvec.npy  [R,384] float32  enc(D) of each candidate, as stored in the index
//	feat.npy  [R,4]   float32  z_sem, z_ent, sem, ent
//	rows.npy  [R,2]   int32    question index, label (1 = gold document)
//	ngold.npy [Q]     int32    gold documents of the question (for recall)
//
// Questions whose pipeline run fails are counted, logged on stderr and
// skipped; the summary line goes to stdout.
func GateFeatures(ctx context.Context, p CandidateSource, qs []Question, out string, stdout, stderr io.Writer) error {
	if err := pooledOnly(qs); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	opts := p.Defaults()
	var qvec, dvec, feat []float32
	var rows []int32
	var docsVec [][]float32 // the question's candidates' vectors, for add
	ngold, skipped, err := exportQuestions(ctx, "gate features", qs, stderr, nil,
		func(q Question) ([]pipeline.Doc, error) {
			cands, dv, qv, err := gateCandidates(ctx, p, q.Question, opts)
			if err == nil {
				docsVec, qvec = dv, append(qvec, qv...)
			}
			return cands, err
		},
		func(qi int32, gold map[string]bool, cands []pipeline.Doc) {
			for i, c := range cands {
				b := c.Breakdown
				dvec = append(dvec, docsVec[i]...)
				feat = append(feat, float32(b.ZSemantic), float32(b.ZStructural), float32(b.Semantic), float32(b.Structural))
				rows = append(rows, qi, goldLabel(gold, c.ID))
			}
		})
	if err != nil {
		return err
	}
	nq, r := len(ngold), len(rows)/2
	dim := len(qvec) / nq
	if err := writeArrays(out, []array{
		{"qvec.npy", qvec, []int{nq, dim}},
		{"dvec.npy", dvec, []int{r, dim}},
		{"feat.npy", feat, []int{r, 4}},
		{"rows.npy", rows, []int{r, 2}},
		{"ngold.npy", ngold, []int{nq}},
	}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "gate features: %d questions (%d skipped), %d candidate rows -> %s\n", nq, skipped, r, out)
	return nil
}

// gateCandidates are question's stage-1 candidates scored, their stored
// vectors and enc(question).
func gateCandidates(ctx context.Context, p CandidateSource, question string, opts pipeline.Options) ([]pipeline.Doc, [][]float32, []float32, error) {
	cands, _, err := p.Candidates(ctx, question, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(cands) == 0 {
		return nil, nil, nil, fmt.Errorf("no candidates")
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	docs, err := p.Index().Documents(ctx, ids)
	if err == nil && len(docs) != len(ids) {
		err = fmt.Errorf("%d vectors for %d candidates", len(docs), len(ids))
	}
	if err != nil {
		return nil, nil, nil, err
	}
	docsVec := make([][]float32, 0, len(docs))
	for _, d := range docs {
		docsVec = append(docsVec, d.Vector)
	}
	qv, err := p.Encoder().Encode(ctx, []string{question})
	if err != nil {
		return nil, nil, nil, err
	}
	return cands, docsVec, qv[0], nil
}

// array is one .npy file to write: its name, data and shape.
type array struct {
	name  string
	data  any
	shape []int
}

// writeArrays writes each array under out.
func writeArrays(out string, arrays []array) error {
	for _, f := range arrays {
		if err := npy.Write(filepath.Join(out, f.name), f.data, f.shape...); err != nil {
			return err
		}
	}
	return nil
}

// EvidenceSource runs DMAR and reports every scored candidate's evidence
// (pipeline.Pipeline satisfies it).
type EvidenceSource interface {
	RetrieveEvidence(ctx context.Context, query string, opts pipeline.Options) (*pipeline.Result, []pipeline.EvidenceRow, error)
}

// EvidenceStages number the scoring stages in rows.npy.
var EvidenceStages = map[string]int32{"first": 0, "second": 1}

// GateEvidence runs the full pipeline with opts for every question of a
// labelled dataset and writes the evidence-aware gate's training data under
// out: every candidate of both scoring stages whose structural path is on
// (the gate is asked only then),
//
//	feat.npy      [R,F] float32  scoring.Evidence.Vector (features.json names the columns)
//	offset.npy    [R]   float32  what the pipeline adds to the fused score (graph_boost x graph score)
//	rows.npy      [R,3] int32    question index, label (1 = gold document), stage (EvidenceStages)
//	ngold.npy     [Q]   int32    gold documents of the question
//	features.json              the column names
//
// Questions whose run fails are counted, logged on stderr and skipped.
func GateEvidence(ctx context.Context, p EvidenceSource, qs []Question, opts pipeline.Options, out string, stdout, stderr io.Writer) error {
	if err := pooledOnly(qs); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	nf := len(scoring.EvidenceFeatures)
	var feat, offset []float32
	var rows []int32
	ngold, skipped, err := exportQuestions(ctx, "gate evidence", qs, stderr, nil,
		func(q Question) ([]pipeline.EvidenceRow, error) {
			_, ev, err := p.RetrieveEvidence(ctx, q.Question, opts)
			return ev, err
		},
		func(qi int32, gold map[string]bool, ev []pipeline.EvidenceRow) {
			for _, e := range ev {
				feat = append(feat, e.Evidence.Vector()...)
				offset = append(offset, float32(e.Offset))
				rows = append(rows, qi, goldLabel(gold, e.ID), EvidenceStages[e.Stage])
			}
		})
	if err != nil {
		return err
	}
	nq, r := len(ngold), len(offset)
	if err := writeArrays(out, []array{
		{"feat.npy", feat, []int{r, nf}},
		{"offset.npy", offset, []int{r}},
		{"rows.npy", rows, []int{r, 3}},
		{"ngold.npy", ngold, []int{nq}},
	}); err != nil {
		return err
	}
	names, err := json.Marshal(scoring.EvidenceFeatures)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "features.json"), append(names, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "gate evidence: %d questions (%d skipped), %d candidate rows -> %s\n", nq, skipped, r, out)
	return nil
}
