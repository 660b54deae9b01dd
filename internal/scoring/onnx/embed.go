package onnx

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// EmbedFlags are dmar embed's flags (Register); Embed runs it.
type EmbedFlags struct {
	cfg        Config
	name       string
	dir        string
	defaultDir string
	batch      int
	passage    bool
}

// Register adds f's flags to fs, with the runtime cfg, the encoder name, its
// folder dir and batch as defaults, and sets fs's usage line.
func (f *EmbedFlags) Register(fs *flag.FlagSet, cfg Config, name, dir string, batch int) {
	f.cfg, f.defaultDir = cfg, dir
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: dmar embed [flags] TEXT...   (no TEXT: one text per stdin line)")
		fs.PrintDefaults()
	}
	fs.StringVar(&f.cfg.LibPath, "ort-lib", cfg.LibPath, "ONNX Runtime library (env DMAR_ORT_LIB)")
	fs.StringVar(&f.cfg.Device, "device", cfg.Device, "cpu or cuda (env DMAR_DEVICE)")
	fs.IntVar(&f.cfg.IntraOpThreads, "threads", cfg.IntraOpThreads, "intra-op threads, 0 = half the CPUs, at least 1 (env DMAR_ORT_THREADS)")
	fs.StringVar(&f.name, "encoder", name, "sentence encoder, one of "+strings.Join(Encoders(), ", ")+" (env DMAR_ENCODER)")
	fs.StringVar(&f.dir, "encoder-dir", dir, "encoder folder built by scripts/setup.sh; left at the default encoder's, it follows --encoder (env DMAR_ENCODER_DIR)")
	fs.BoolVar(&f.passage, "passage", false, "embed as documents (the passage prefix) rather than queries")
	fs.IntVar(&f.batch, "batch", batch, "texts per model call (env DMAR_ENCODER_BATCH)")
}

// Embed is EmbedWith f's settings.
func (f *EmbedFlags) Embed(ctx context.Context, texts []string, in io.Reader, w io.Writer) error {
	dir := f.dir
	if dir == f.defaultDir && f.name != DefaultEncoderName && filepath.Base(dir) == DefaultEncoderName {
		dir = filepath.Join(filepath.Dir(dir), f.name)
	}
	return EmbedWith(ctx, EmbedOptions{Config: f.cfg, Encoder: f.name, Dir: dir, Batch: f.batch, Passage: f.passage}, texts, in, w)
}

// Embed encodes texts with the default sentence encoder in dir, as queries;
// see EmbedWith.
func Embed(ctx context.Context, cfg Config, dir string, batch int, texts []string, in io.Reader, w io.Writer) error {
	return EmbedWith(ctx, EmbedOptions{Config: cfg, Dir: dir, Batch: batch}, texts, in, w)
}

// EmbedOptions are EmbedWith's settings.
type EmbedOptions struct {
	Config  Config // the runtime
	Encoder string // registry name; "" is DefaultEncoderName
	Dir     string // its folder
	Batch   int    // texts per model call
	Passage bool   // embed as documents (passage prefix), not queries
}

// EmbedWith encodes texts with the sentence encoder of o and writes one JSON
// object {"text":..., "embedding":[...]} per text to w, in input order. With
// no texts, each line of in is one (dmar embed's stdin).
func EmbedWith(ctx context.Context, o EmbedOptions, texts []string, in io.Reader, w io.Writer) error {
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
	rt, err := Open(o.Config)
	if err != nil {
		return err
	}
	enc, err := NewEncoder(rt, o.Dir, WithBatchSize(o.Batch), WithEncoderName(o.Encoder))
	if err != nil {
		return err
	}
	defer enc.Close()
	view := enc
	if o.Passage {
		view = enc.Passage()
	}
	vecs, err := view.Encode(ctx, texts)
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
