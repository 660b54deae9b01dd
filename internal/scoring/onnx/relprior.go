package onnx

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

var _ pathrel.Prior = (*RelPrior)(nil)

// RelPriorModelFile is the committed question -> relation prior's path
// inside the repository (models/relprior/train.py writes it).
const RelPriorModelFile = "models/relprior/relprior.onnx"

// DefaultRelPriorPath is models/relprior/relprior.onnx in the first
// directory at or above the working directory that has it.
func DefaultRelPriorPath() string { return findUp(RelPriorModelFile) }

// RelPrior is the learned question -> relation prior run by ONNX Runtime:
// enc(Q) [1,d] in, the probability of each (relation, direction) step [1,C]
// out, the classes ("P19|0", "P19|1": forwards, backwards) in the model's
// metadata. Safe for concurrent use.
type RelPrior struct {
	sess    *Session
	dim     int
	classes []pathrel.StepKey
	encoder string // the registry name of the encoder it was trained on
	version string
}

// NewRelPrior loads the prior model at path.
func NewRelPrior(rt *Runtime, path string) (*RelPrior, error) {
	version, ins, outs, err := modelFile(path, "relation prior", "relprior")
	if err != nil {
		return nil, err
	}
	p := &RelPrior{version: version}
	for _, in := range ins {
		if in.Name == "q" && len(in.Dimensions) == 2 && in.Dimensions[1] > 0 {
			p.dim = int(in.Dimensions[1])
		}
	}
	if p.dim == 0 {
		return nil, fmt.Errorf("relation prior: %s has no input \"q\" of shape [B,d]", path)
	}
	md, err := metadata(path, "relation prior", "classes", "encoder")
	if err != nil {
		return nil, err
	}
	raw2, ok := md["classes"]
	if !ok {
		return nil, fmt.Errorf("relation prior: %s has no \"classes\" metadata", path)
	}
	p.encoder = md["encoder"]
	var names []string
	if err := json.Unmarshal([]byte(raw2), &names); err != nil {
		return nil, fmt.Errorf("relation prior: classes of %s: %w", path, err)
	}
	for _, n := range names {
		pid, dir, found := strings.Cut(n, "|")
		d, err := strconv.Atoi(dir)
		if !found || err != nil || (d != 0 && d != 1) {
			return nil, fmt.Errorf("relation prior: class %q of %s is not PID|0 or PID|1", n, path)
		}
		p.classes = append(p.classes, pathrel.StepKey{PID: pid, Backward: d == 1})
	}
	okOut := false
	for _, o := range outs {
		okOut = okOut || (o.Name == "prior" && len(o.Dimensions) == 2 && o.Dimensions[1] == int64(len(p.classes)))
	}
	if !okOut {
		return nil, fmt.Errorf("relation prior: %s has no output \"prior\" of shape [B,%d]", path, len(p.classes))
	}
	if p.sess, err = rt.NewSession(path, []string{"q"}, []string{"prior"}); err != nil {
		return nil, fmt.Errorf("relation prior: %w", err)
	}
	return p, nil
}

// Version is "relprior-" and the start of the model file's SHA-256.
func (p *RelPrior) Version() string { return p.version }

// Close frees the session.
func (p *RelPrior) Close() error { return p.sess.Close() }

// Prior implements pathrel.Prior.
func (p *RelPrior) Prior(ctx context.Context, qvec []float32) (map[pathrel.StepKey]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(qvec) != p.dim {
		return nil, fmt.Errorf("relation prior: query vector has %d dimensions, the model takes %d", len(qvec), p.dim)
	}
	in, err := ort.NewTensor(ort.NewShape(1, int64(p.dim)), append([]float32(nil), qvec...))
	if err != nil {
		return nil, fmt.Errorf("relation prior: input tensor: %w", err)
	}
	defer in.Destroy()
	out, err := ort.NewEmptyTensor[float32](ort.NewShape(1, int64(len(p.classes))))
	if err != nil {
		return nil, fmt.Errorf("relation prior: output tensor: %w", err)
	}
	defer out.Destroy()
	if err := p.sess.Run([]ort.Value{in}, []ort.Value{out}); err != nil {
		return nil, fmt.Errorf("relation prior: %w", err)
	}
	res := make(map[pathrel.StepKey]float64, len(p.classes))
	for i, v := range out.GetData() {
		res[p.classes[i]] = float64(v)
	}
	return res, nil
}
