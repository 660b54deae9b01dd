package main

import (
	"context"
	"io"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/docstore/docbench"
)

func init() {
	register("bench docs", "live documents: upsert docs/s beside the load path, search p50 alone and under writes, restart after changed documents beside a cold build, bytes per document", runBenchDocs)
}

// dmar bench docs --data ../shared/data/codexm-film --restart ../shared/data/codexm
func runBenchDocs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f docbench.Flags
	if _, err := a.parseArgs("bench docs", args, stderr, f.Register); err != nil {
		return err
	}
	return backends.RunDocBench(ctx, a.cfg, f, stdout, stderr, newLogger(stderr, "warn"))
}
