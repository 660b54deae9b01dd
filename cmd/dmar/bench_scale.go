package main

import (
	"context"
	"io"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/bench"
)

func init() {
	register("bench scale", "ingest rate, memory, hybrid search and default request latency at growing corpus sizes (real, then synthetic documents), embedded and with --index in Weaviate; ends with scale_ratio=R", runBenchScale)
}

// dmar bench scale --data DIR [--index weaviate://HOST:PORT] --sizes 16000,128000,1000000
func runBenchScale(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f bench.ScaleFlags
	if _, err := a.parseArgs("bench scale", args, stderr, f.Register); err != nil {
		return err
	}
	return cliErr(backends.RunScale(ctx, a.cfg, f, stdout, stderr, warnLogger(stderr)))
}
