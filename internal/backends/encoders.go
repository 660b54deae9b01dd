package backends

import (
	"fmt"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
)

// DocEncoders opens registry encoders by name as load time opens the
// configured document encoder: truncated to models.doc_tokens, with the
// passage prefix, in batches of models.encoder_batch (dmar bench embed).
type DocEncoders struct {
	rt     *onnx.Runtime
	models config.Models
}

// CheckEncoders reports a name the registry does not hold as an
// errs.Invalid error.
func CheckEncoders(names []string) error {
	for _, n := range names {
		if _, err := onnx.LookupEncoder(n); err != nil {
			return errs.E(errs.Invalid, "--encoders: %v", err)
		}
	}
	return nil
}

// OpenDocEncoders opens cfg's ONNX Runtime for DocEncoders.
func OpenDocEncoders(cfg config.Config) (DocEncoders, error) {
	rt, err := onnx.Open(ORT(cfg.ORT))
	return DocEncoders{rt: rt, models: cfg.Models}, err
}

// Open opens the encoder called name; release frees it.
func (d DocEncoders) Open(name string) (enc *onnx.Encoder, release func(), err error) {
	m := d.models
	m.Encoder = name
	e, err := onnx.NewEncoder(d.rt, m.EncoderFolder(), onnx.WithEncoderName(name), onnx.WithBatchSize(m.EncoderBatch))
	if err != nil {
		return nil, nil, err
	}
	return e.Truncated(m.DocTokens).Passage(), func() { _ = e.Close() }, nil
}

// Describe says how the texts of source are encoded, for a report.
func (d DocEncoders) Describe(source string) string {
	return fmt.Sprintf("%s at --doc-tokens %d, batches of %d, %d threads", source, d.models.DocTokens, d.models.EncoderBatch, d.rt.Config().Threads())
}
