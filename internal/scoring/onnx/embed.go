package onnx

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// Embed encodes texts with the sentence encoder in dir (batch texts per
// model call) on the runtime of cfg and writes one JSON object
// {"text":..., "embedding":[...]} per text to w, in input order. With no
// texts, each line of in is one (dmar embed's stdin).
func Embed(ctx context.Context, cfg Config, dir string, batch int, texts []string, in io.Reader, w io.Writer) error {
	if len(texts) == 0 {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
		for sc.Scan() {
			texts = append(texts, sc.Text())
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("embed: read stdin: %w", err)
		}
	}
	rt, err := Open(cfg)
	if err != nil {
		return err
	}
	enc, err := NewEncoder(rt, dir, WithBatchSize(batch))
	if err != nil {
		return err
	}
	defer enc.Close()
	vecs, err := enc.Encode(ctx, texts)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	je := json.NewEncoder(bw)
	je.SetEscapeHTML(false)
	for i, t := range texts {
		if err := je.Encode(struct {
			Text      string    `json:"text"`
			Embedding []float32 `json:"embedding"`
		}{t, vecs[i]}); err != nil {
			return err
		}
	}
	return bw.Flush()
}
