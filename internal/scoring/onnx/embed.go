package onnx

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
)

// EmbedFlags are dmar embed's flags (Register); Embed runs it.
type EmbedFlags struct {
	cfg   Config
	dir   string
	batch int
}

// Register adds f's flags to fs, with the runtime cfg, the encoder folder
// dir and batch as defaults, and sets fs's usage line.
func (f *EmbedFlags) Register(fs *flag.FlagSet, cfg Config, dir string, batch int) {
	f.cfg = cfg
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dmar embed [flags] TEXT...   (no TEXT: one text per stdin line)")
		fs.PrintDefaults()
	}
	fs.StringVar(&f.cfg.LibPath, "ort-lib", cfg.LibPath, "ONNX Runtime library (env DMAR_ORT_LIB)")
	fs.StringVar(&f.cfg.Device, "device", cfg.Device, "cpu or cuda (env DMAR_DEVICE)")
	fs.IntVar(&f.cfg.IntraOpThreads, "threads", cfg.IntraOpThreads, "intra-op threads, 0 = ONNX Runtime's choice (env DMAR_ORT_THREADS)")
	fs.StringVar(&f.dir, "encoder-dir", dir, "encoder folder built by scripts/setup.sh (env DMAR_ENCODER_DIR)")
	fs.IntVar(&f.batch, "batch", batch, "texts per model call (env DMAR_ENCODER_BATCH)")
}

// Embed is Embed with f's settings.
func (f *EmbedFlags) Embed(ctx context.Context, texts []string, in io.Reader, w io.Writer) error {
	return Embed(ctx, f.cfg, f.dir, f.batch, texts, in, w)
}

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
