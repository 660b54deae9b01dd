package main

import (
	"context"
	"fmt"
	"io"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/bench"
	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
)

// runBenchEmbed wires a bench.Embed: the corpus of --data, encoders of the
// registry opened as load time opens them (--doc-tokens, passage prefix).
//
//	dmar bench embed --data ../shared/data/codexm --limit 512 --encoders all-MiniLM-L6-v2,e5-small-v2-int8
func runBenchEmbed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f bench.EmbedFlags
	fs := a.flags("bench embed", stderr)
	f.Register(fs)
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("bench embed: unexpected arguments %q", fs.Args())}
	}
	encs, err := f.EncoderNames(a.cfg.Models.Encoder)
	if err != nil {
		return cliErr(err)
	}
	for _, n := range encs {
		if _, err := onnx.LookupEncoder(n); err != nil {
			return usageError{"--encoders: " + err.Error()}
		}
	}
	path := a.cfg.CorpusFile()
	docs, _, err := corpus.ReadFile(ctx, path)
	if err != nil {
		return err
	}
	if f.Limit > 0 && f.Limit < len(docs) {
		docs = docs[:f.Limit]
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = corpus.EncodeText(d)
	}
	rt, err := onnx.Open(backends.ORT(a.cfg.ORT))
	if err != nil {
		return err
	}
	mc := a.cfg.Models
	open := func(name string) (bench.CorpusEncoder, func(), error) {
		m := mc
		m.Encoder = name
		enc, err := onnx.NewEncoder(rt, m.EncoderFolder(), onnx.WithEncoderName(name), onnx.WithBatchSize(m.EncoderBatch))
		if err != nil {
			return nil, nil, err
		}
		return enc.Truncated(m.DocTokens).Passage(), func() { _ = enc.Close() }, nil
	}
	src := fmt.Sprintf("%s at --doc-tokens %d, batches of %d, %d threads", path, mc.DocTokens, mc.EncoderBatch, rt.Config().Threads())
	_, err = bench.Embed{Texts: texts, Source: src, Encoders: encs, Open: open, Rounds: f.Rounds}.Run(ctx, stdout, stderr)
	return err
}
