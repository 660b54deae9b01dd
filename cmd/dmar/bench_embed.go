package main

import (
	"context"
	"fmt"
	"io"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/bench"
)

// runBenchEmbed wires a bench.Embed: the corpus of --data, encoders of the
// registry opened as load time opens them (--doc-tokens, passage prefix).
//
//	dmar bench embed --data ../shared/data/codexm --limit 512 --encoders all-MiniLM-L6-v2,e5-small-v2-int8
func runBenchEmbed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f bench.EmbedFlags
	fs, err := a.parseArgs("bench embed", args, stderr, f.Register)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{Msg: fmt.Sprintf("bench embed: unexpected arguments %q", fs.Args())}
	}
	encs, err := f.EncoderNames(a.cfg.Models.Encoder)
	if err == nil {
		err = backends.CheckEncoders(encs)
	}
	if err != nil {
		return cliErr(err)
	}
	path := a.cfg.CorpusFile()
	texts, err := f.Texts(ctx, path)
	if err != nil {
		return err
	}
	encoders, err := backends.OpenDocEncoders(a.cfg)
	if err != nil {
		return err
	}
	open := func(name string) (bench.CorpusEncoder, func(), error) { return encoders.Open(name) }
	_, err = bench.Embed{Texts: texts, Source: encoders.Describe(path), Encoders: encs, Open: open, Rounds: f.Rounds}.Run(ctx, stdout, stderr)
	return err
}
