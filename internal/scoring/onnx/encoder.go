package onnx

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
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

// Encoder is a sentence encoder of the registry (registry.go) run by ONNX
// Runtime: WordPiece in Go, then the transformer. For all-MiniLM-L6-v2 the
// graph pools and normalises itself (models/encoder/build_onnx.py); for the
// others the graph returns last_hidden_state and Go pools (mean or [CLS])
// and L2-normalises. Encode embeds queries (with the query prefix);
// Passage() embeds documents (with the passage prefix). Safe for concurrent
// use.
type Encoder struct {
	ident   string
	sess    *Session
	rt      *Runtime // for EncodeCorpus's own session (corpus.go)
	model   string   // model.onnx
	inputs  []string // the graph's inputs, in Run's order
	tok     *wordpiece.Tokenizer
	spec    EncoderSpec
	name    string
	dim     int
	maxLen  int
	batch   int
	outName string
	prefix  string // prepended to every text: the query or passage prefix
	passage bool
}

// EncoderOption adjusts NewEncoder.
type EncoderOption func(*Encoder)

// WithEncoderName says which registry entry the folder holds (default
// DefaultEncoderName); NewEncoder checks the folder's manifest against it.
func WithEncoderName(name string) EncoderOption {
	return func(e *Encoder) { e.spec.Name = name }
}

// WithBatchSize sets how many texts go to the model per call (>= 1).
func WithBatchSize(n int) EncoderOption {
	return func(e *Encoder) { e.batch = n }
}

// manifest is what build_onnx.py writes beside model.onnx.
// scripts/setup/30-encoders.sh writes Name, Source and SHA256 instead.
type manifest struct {
	SourceSHA256 string            `json:"source_sha256"`       // 20-encoder.sh
	BuildSHA256  string            `json:"build_script_sha256"` // 20-encoder.sh
	Name         string            `json:"name"`
	Dim          int               `json:"dim"`
	Inputs       []string          `json:"inputs"`
	Output       string            `json:"output"`
	Source       string            `json:"source"`
	SHA256       map[string]string `json:"sha256"`
}

// rawDim is the width of last_hidden_state of the registry's raw encoders.
const rawDim = 384

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
	spec, err := LookupEncoder(e.spec.Name)
	if err != nil {
		return nil, err
	}
	e.spec, e.prefix = spec, spec.QueryPrefix
	var m manifest
	if err := readJSON(filepath.Join(dir, "manifest.json"), &m); err != nil {
		hint := "run scripts/setup.sh or set DMAR_ENCODER_DIR"
		if spec.Pooling != PoolInGraph {
			hint = "run DMAR_ENCODERS=" + spec.Name + " scripts/setup.sh or set DMAR_ENCODER_DIR"
		}
		return nil, fmt.Errorf("encoder: %w (%s)", err, hint)
	}
	if m.Name != spec.Name && m.Name != spec.Model {
		return nil, fmt.Errorf("encoder: %s holds %q, not the configured %s (set DMAR_ENCODER_DIR or models.encoder)", dir, m.Name, spec.Name)
	}
	if spec.Pooling != PoolInGraph {
		e.ident = fmt.Sprintf("%s model.onnx sha256 %s, tokenizer.json sha256 %s (%s)", spec.Name, m.SHA256["model.onnx"], m.SHA256["tokenizer.json"], m.Source)
		return e.openRaw(rt, dir, m)
	}
	e.ident = fmt.Sprintf("%s from %s sha256 %s, build script sha256 %s", spec.Name, m.Source, m.SourceSHA256, m.BuildSHA256)
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
	e.rt, e.model, e.inputs = rt, filepath.Join(dir, "model.onnx"), m.Inputs
	sess, err := rt.NewSession(e.model, e.inputs, []string{m.Output})
	if err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	e.sess, e.tok, e.name, e.dim, e.maxLen, e.outName = sess, tok, m.Name, m.Dim, st.MaxSeqLength, m.Output
	return e, nil
}

// openRaw opens a folder of scripts/setup/30-encoders.sh: model.onnx taking
// input_ids, attention_mask and token_type_ids and returning
// last_hidden_state, and tokenizer.json. The version is the name and the
// content hash of both files, so stored vectors name exactly what made them.
func (e *Encoder) openRaw(rt *Runtime, dir string, m manifest) (*Encoder, error) {
	mh, th := m.SHA256["model.onnx"], m.SHA256["tokenizer.json"]
	if len(mh) < 12 || len(th) < 12 {
		return nil, fmt.Errorf("encoder: %s: manifest lacks the files' sha256 (rerun scripts/setup/30-encoders.sh)", dir)
	}
	tok, err := wordpiece.Load(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	e.rt, e.model, e.inputs = rt, filepath.Join(dir, "model.onnx"), []string{"input_ids", "attention_mask", "token_type_ids"}
	sess, err := rt.NewSession(e.model, e.inputs, []string{"last_hidden_state"})
	if err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	e.sess, e.tok, e.dim, e.maxLen, e.outName = sess, tok, rawDim, e.spec.MaxLen, "last_hidden_state"
	e.name = fmt.Sprintf("%s#%s.%s", e.spec.Name, mh[:12], th[:12])
	if e.spec.PerText {
		// Vectors made before texts were run one by one depended on their
		// company: a new version, so that no cache or index mixes the two.
		e.name += ".t1"
	}
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

// Identity names the encoder and the content hashes of what made its files
// (from the folder's manifest), for the records kept beside stored vectors.
func (e *Encoder) Identity() string { return e.ident }

// Spec is the encoder's registry entry.
func (e *Encoder) Spec() EncoderSpec { return e.spec }

// Passage returns an encoder that shares e's session but embeds documents:
// the passage prefix instead of the query prefix. Where the two prefixes are
// equal (all-MiniLM-L6-v2, none) it is e itself, so vectors and versions are
// unchanged; otherwise the version says "+passage". Close only the original.
func (e *Encoder) Passage() *Encoder {
	if e.passage || e.spec.PassagePrefix == e.spec.QueryPrefix {
		return e
	}
	c := *e
	c.passage = true
	c.prefix = e.spec.PassagePrefix
	c.name = e.name + "+passage"
	return &c
}

// Dim is the embedding size (384).
func (e *Encoder) Dim() int { return e.dim }

// Version names the model: "sentence-transformers/all-MiniLM-L6-v2" for the
// default, NAME#MODELSHA.TOKENIZERSHA (12 hex digits each) for the others;
// Truncated and Passage views add to it.
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
	ids := make([][]int64, len(texts))
	for i, s := range texts {
		ids[i] = e.tokens(s)
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
		vecs, err := e.run(e.sess, rows)
		if err != nil {
			return nil, err
		}
		for j, i := range chunk {
			out[i] = vecs[j]
		}
	}
	return out, nil
}

// tokens is what the model reads of s: the prefix, s stripped of outer
// space as sentence-transformers does, truncated at maxLen.
func (e *Encoder) tokens(s string) []int64 {
	return e.tok.Encode(e.prefix+strings.TrimFunc(s, unicode.IsSpace), e.maxLen)
}

// run pads rows to the longest and runs one model call on sess.
func (e *Encoder) run(sess *Session, rows [][]int64) ([][]float32, error) {
	if e.spec.PerText && e.passage && len(rows) > 1 {
		out := make([][]float32, 0, len(rows))
		for _, r := range rows {
			v, err := e.run(sess, [][]int64{r})
			if err != nil {
				return nil, err
			}
			out = append(out, v[0])
		}
		return out, nil
	}
	if e.spec.Pooling != PoolInGraph {
		return e.runRaw(sess, rows)
	}
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
	if err := sess.Run([]ort.Value{idT, maskT}, []ort.Value{outT}); err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	flat := outT.GetData()
	vecs := make([][]float32, b)
	for i := range vecs {
		vecs[i] = append([]float32(nil), flat[i*e.dim:(i+1)*e.dim]...)
	}
	return vecs, nil
}

// runRaw runs a last_hidden_state graph on rows padded to the longest and
// pools in Go: the mask-weighted mean (e5) or the [CLS] vector (bge), then
// L2 normalisation, in float64 as the reference does in float32 numpy
// within 1e-6.
func (e *Encoder) runRaw(sess *Session, rows [][]int64) ([][]float32, error) {
	flat, cols, err := e.lastHidden(sess, rows)
	if err != nil {
		return nil, err
	}
	return e.poolRaw(flat, rows, cols), nil
}

// poolRaw pools last_hidden_state flat ([len(rows), cols, dim]) by the
// encoder's pooling and L2-normalises.
func (e *Encoder) poolRaw(flat []float32, rows [][]int64, cols int) [][]float32 {
	vecs := make([][]float32, len(rows))
	acc := make([]float64, e.dim)
	for i, r := range rows {
		clear(acc)
		n := 1
		if e.spec.Pooling == PoolMean {
			n = len(r)
		}
		for j := range n {
			tok := flat[(i*cols+j)*e.dim : (i*cols+j+1)*e.dim]
			for k, x := range tok {
				acc[k] += float64(x)
			}
		}
		var ss float64
		for k := range acc {
			acc[k] /= float64(n)
			ss += acc[k] * acc[k]
		}
		norm := math.Max(math.Sqrt(ss), 1e-12)
		v := make([]float32, e.dim)
		for k := range acc {
			v[k] = float32(acc[k] / norm)
		}
		vecs[i] = v
	}
	return vecs
}

// lastHidden runs a last_hidden_state graph on rows padded to the longest
// (cols): the states, row-major [len(rows), cols, dim].
func (e *Encoder) lastHidden(sess *Session, rows [][]int64) ([]float32, int, error) {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	b := len(rows)
	idData := make([]int64, b*cols)
	maskData := make([]int64, b*cols)
	typeData := make([]int64, b*cols) // one segment
	pad := e.tok.PadID()
	for i, r := range rows {
		for j := range cols {
			if j < len(r) {
				idData[i*cols+j] = r[j]
				maskData[i*cols+j] = 1
			} else {
				idData[i*cols+j] = pad
			}
		}
	}
	shape := ort.NewShape(int64(b), int64(cols))
	var ins []ort.Value
	defer func() { Destroy(ins...) }()
	for _, d := range [][]int64{idData, maskData, typeData} {
		t, err := ort.NewTensor(shape, d)
		if err != nil {
			return nil, 0, fmt.Errorf("encoder: input tensor: %w", err)
		}
		ins = append(ins, t)
	}
	outT, err := ort.NewEmptyTensor[float32](ort.NewShape(int64(b), int64(cols), int64(e.dim)))
	if err != nil {
		return nil, 0, fmt.Errorf("encoder: output tensor: %w", err)
	}
	defer outT.Destroy()
	if err := sess.Run(ins, []ort.Value{outT}); err != nil {
		return nil, 0, fmt.Errorf("encoder: %w", err)
	}
	return outT.GetData(), cols, nil
}
