package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/dmar-kg/dmar/internal/bench"
	"github.com/dmar-kg/dmar/internal/config"
)

func init() {
	register("bench load", "closed-loop load test of a running dmar serve: throughput, p50/p95/p99, errors and RSS by concurrency (CSV and a plot with --out)", runBenchLoad)
}

// runBenchLoad parses the flags of a bench.Load and runs it.
//
//	dmar serve --addr 127.0.0.1:8080 &
//	dmar bench load --addr 127.0.0.1:8080 --pid $! --out /tmp/load
func runBenchLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f bench.LoadFlags
	fs := newFlagSet("bench load", stderr)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return usageError{Msg: fmt.Sprintf("bench load: unexpected arguments %q", fs.Args())}
	}
	l, err := f.Load(config.ClientAPIKey(os.Getenv), stderr)
	if err != nil {
		return cliErr(err)
	}
	return l.Run(ctx, stdout)
}
