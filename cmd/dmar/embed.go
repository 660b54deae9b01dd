package main

import (
	"context"
	"io"
	"os"

	"github.com/dmar-kg/dmar/internal/backends"
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
	var f onnx.EmbedFlags
	fs := newFlagSet("embed", stderr)
	f.Register(fs, backends.ORT(c.ORT), c.Models.Encoder, c.Models.EncoderFolder(), c.Models.EncoderBatch)
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	return f.Embed(ctx, fs.Args(), os.Stdin, stdout)
}
