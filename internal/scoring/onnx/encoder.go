package onnx

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/wordpiece"
)

var _ scoring.Encoder = (*Encoder)(nil)

// DefaultBatchSize is how many texts go to the model per call unless
// WithBatchSize says otherwise.
const DefaultBatchSize = 32

// Encoder is a sentence-transformers model (all-MiniLM-L6-v2) run by ONNX
// Runtime: WordPiece in Go, the transformer with mean pooling and L2
// normalisation in the graph (models/encoder/build_onnx.py). Safe for
// concurrent use.
type Encoder struct {
	sess    *Session
	tok     *wordpiece.Tokenizer
	name    string
	dim     int
	maxLen  int
	batch   int
	outName string
}

// EncoderOption adjusts NewEncoder.
type EncoderOption func(*Encoder)

// WithBatchSize sets how many texts go to the model per call (>= 1).
func WithBatchSize(n int) EncoderOption {
	return func(e *Encoder) { e.batch = n }
}

// manifest is what build_onnx.py writes beside model.onnx.
type manifest struct {
	Name   string   `json:"name"`
	Dim    int      `json:"dim"`
	Inputs []string `json:"inputs"`
	Output string   `json:"output"`
}

// NewEncoder loads the encoder folder dir (model.onnx, manifest.json,
// tokenizer.json, sentence_bert_config.json). The batch size defaults to
// DefaultBatchSize.
func NewEncoder(rt *Runtime, dir string, opts ...EncoderOption) (*Encoder, error) {
	e := &Encoder{batch: DefaultBatchSize}
	for _, o := range opts {
		o(e)
	}
	if e.batch < 1 {
		return nil, fmt.Errorf("encoder: batch size %d: want >= 1", e.batch)
	}
	var m manifest
	if err := readJSON(filepath.Join(dir, "manifest.json"), &m); err != nil {
		return nil, fmt.Errorf("encoder: %w (run scripts/setup.sh or set DMAR_ENCODER_DIR)", err)
	}
	if m.Dim <= 0 || len(m.Inputs) != 2 || m.Output == "" {
		return nil, fmt.Errorf("encoder: %s: incomplete manifest %+v", dir, m)
	}
	var st struct {
		MaxSeqLength int `json:"max_seq_length"`
	}
	if err := readJSON(filepath.Join(dir, "sentence_bert_config.json"), &st); err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	if st.MaxSeqLength < 2 {
		return nil, fmt.Errorf("encoder: %s: max_seq_length %d", dir, st.MaxSeqLength)
	}
	tok, err := wordpiece.Load(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	sess, err := rt.NewSession(filepath.Join(dir, "model.onnx"), m.Inputs, []string{m.Output})
	if err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	e.sess, e.tok, e.name, e.dim, e.maxLen, e.outName = sess, tok, m.Name, m.Dim, st.MaxSeqLength, m.Output
	return e, nil
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Dim is the embedding size (384).
func (e *Encoder) Dim() int { return e.dim }

// Version names the model ("sentence-transformers/all-MiniLM-L6-v2").
func (e *Encoder) Version() string { return e.name }

// MaxTokens is the model's limit, [CLS] and [SEP] included; longer texts
// are truncated, as sentence-transformers does.
func (e *Encoder) MaxTokens() int { return e.maxLen }

// Tokenizer is the encoder's tokenizer.
func (e *Encoder) Tokenizer() *wordpiece.Tokenizer { return e.tok }

// Truncated returns an encoder that shares e's session but cuts inputs at n
// tokens ([CLS] and [SEP] included) when n is below the model's limit. Used
// for documents at load time: attention cost grows with length, and the lead
// of an article carries most of its meaning. The version records the limit,
// so vectors made with different limits are never mixed in a cache. Close
// only the original.
func (e *Encoder) Truncated(n int) *Encoder {
	if n <= 1 || n >= e.maxLen {
		return e
	}
	c := *e
	c.maxLen = n
	c.name = fmt.Sprintf("%s@%dtok", e.name, n)
	return &c
}

// Close frees the model.
func (e *Encoder) Close() error { return e.sess.Close() }

// Encode embeds texts, batch-size texts per model call; texts of similar
// length share a call so that little padding is computed. Vectors have unit
// length.
func (e *Encoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	// sentence-transformers strips each text before tokenising.
	ids := make([][]int64, len(texts))
	for i, s := range texts {
		ids[i] = e.tok.Encode(strings.TrimFunc(s, unicode.IsSpace), e.maxLen)
	}
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(ids[a]) - len(ids[b]) })
	for lo := 0; lo < len(order); lo += e.batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chunk := order[lo:min(lo+e.batch, len(order))]
		rows := make([][]int64, len(chunk))
		for j, i := range chunk {
			rows[j] = ids[i]
		}
		vecs, err := e.run(rows)
		if err != nil {
			return nil, err
		}
		for j, i := range chunk {
			out[i] = vecs[j]
		}
	}
	return out, nil
}

// run pads rows to the longest and runs one model call.
func (e *Encoder) run(rows [][]int64) ([][]float32, error) {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	b := len(rows)
	idData := make([]int64, b*cols) // 0 is [PAD]; padding is masked anyway
	maskData := make([]int64, b*cols)
	for i, r := range rows {
		copy(idData[i*cols:], r)
		for j := range r {
			maskData[i*cols+j] = 1
		}
	}
	shape := ort.NewShape(int64(b), int64(cols))
	idT, err := ort.NewTensor(shape, idData)
	if err != nil {
		return nil, fmt.Errorf("encoder: input tensor: %w", err)
	}
	defer idT.Destroy()
	maskT, err := ort.NewTensor(shape, maskData)
	if err != nil {
		return nil, fmt.Errorf("encoder: mask tensor: %w", err)
	}
	defer maskT.Destroy()
	outT, err := ort.NewEmptyTensor[float32](ort.NewShape(int64(b), int64(e.dim)))
	if err != nil {
		return nil, fmt.Errorf("encoder: output tensor: %w", err)
	}
	defer outT.Destroy()
	if err := e.sess.Run([]ort.Value{idT, maskT}, []ort.Value{outT}); err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	flat := outT.GetData()
	vecs := make([][]float32, b)
	for i := range vecs {
		vecs[i] = append([]float32(nil), flat[i*e.dim:(i+1)*e.dim]...)
	}
	return vecs, nil
}
