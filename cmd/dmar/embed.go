package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
)

func init() {
	register("embed", "print the sentence encoder's embedding of each text (args, or stdin lines) as JSON lines", runEmbed)
}

// runEmbed prints {"text":..., "embedding":[...]} per input, in input order.
func runEmbed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// Defaults and DMAR_* variables as every command reads them; no file.
	c := defaultConfig()
	if err := config.Env(&c, os.Getenv).Err(); err != nil {
		return err
	}
	cfg := ortConfig(c.ORT)
	fs := newFlagSet("embed", stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: dmar embed [flags] TEXT...   (no TEXT: one text per stdin line)")
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.LibPath, "ort-lib", cfg.LibPath, "ONNX Runtime library (env DMAR_ORT_LIB)")
	fs.StringVar(&cfg.Device, "device", cfg.Device, "cpu or cuda (env DMAR_DEVICE)")
	fs.IntVar(&cfg.IntraOpThreads, "threads", cfg.IntraOpThreads, "intra-op threads, 0 = ONNX Runtime's choice (env DMAR_ORT_THREADS)")
	dir := fs.String("encoder-dir", c.Models.EncoderDir, "encoder folder built by scripts/setup.sh (env DMAR_ENCODER_DIR)")
	batch := fs.Int("batch", c.Models.EncoderBatch, "texts per model call (env DMAR_ENCODER_BATCH)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return usageError{err.Error()}
	}
	return onnx.Embed(ctx, cfg, *dir, *batch, fs.Args(), os.Stdin, stdout)
}
