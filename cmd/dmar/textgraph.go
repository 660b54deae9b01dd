package main

import (
	"context"
	"flag"
	"io"

	"github.com/dmar-kg/dmar/internal/eval"
)

func init() {
	register("textgraph compare", "compare the text graph's phrase extractors with a peer's extraction (HippoRAG's OpenIE file): entity precision and recall, passages per second, memory", runTextGraphCompare)
}

func runTextGraphCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f eval.ExtractorFlags
	if _, err := a.parseArgs("textgraph compare", args, stderr, func(fs *flag.FlagSet) { f.Register(fs, defaultConfig().TextGraph.Python) }); err != nil {
		return err
	}
	return cliErr(f.Run(ctx, stdout))
}
