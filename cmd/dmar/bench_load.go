package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

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
	fs := flag.NewFlagSet("bench load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "the server's HOST:PORT (loopback)")
	base := fs.String("url", "", "the server's base URL (overrides --addr)")
	pid := fs.Int("pid", 0, "the server's process id, for RSS samples (0: none)")
	levels := fs.String("levels", "1,2,4,8,16,32", "concurrency levels, in order")
	dur := fs.Duration("duration", 15*time.Second, "time per level")
	questions := fs.String("questions", "", "JSONL file with a question field per line (default: built-in questions)")
	extra := fs.String("options", `"k":5`, "extra JSON members of every request body (retrieve options)")
	out := fs.String("out", "", "folder for load.csv, rss.csv, load.png and summary.txt (empty: only print)")
	timeout := fs.Duration("timeout", 30*time.Second, "client time limit of one request")
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("bench load: unexpected arguments %q", fs.Args())}
	}
	l := bench.Load{PID: *pid, Duration: *dur, Out: *out}
	var err error
	if l.Levels, err = bench.ParseLevels(*levels); err != nil {
		return usageError{"--levels: " + err.Error()}
	}
	if l.Template, err = bench.ParseRequestOptions(*extra); err != nil {
		return usageError{fmt.Sprintf("--options %s: %v", *extra, err)}
	}
	if l.Questions, err = bench.LoadQuestions(*questions, stderr); err != nil {
		return err
	}
	url := *base
	if url == "" {
		url = *addr
	}
	if l.Client, err = bench.LoadClient(url, *timeout, config.ClientAPIKey(os.Getenv)); err != nil {
		return usageError{err.Error()}
	}
	return l.Run(ctx, stdout)
}
