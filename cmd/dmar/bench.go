package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/bench"
	"github.com/dmar-kg/dmar/internal/config"
)

func init() {
	register("bench latency", "p50/p95 latency of DMAR (exact, Monte Carlo, question-aware) beside plain hybrid search, over a question file", benchWith("bench latency", backends.RunLatency))
	register("bench subgraphs", "p50/p95 of one Subgraphs call of N seeded roots on the embedded graph beside --graph (Neo4j), same roots; ends with p50_ratio=R", benchWith("bench subgraphs", backends.RunSubgraphs))
	register("bench failover", "retrieve requests and document writes against a Weaviate cluster while its nodes are killed -9 and restarted in turn; ends with failover requests=N failed=F acked_writes=W lost=L p99_ms=P", benchWith("bench failover", backends.RunFailover))
	register("bench scale", "ingest rate, memory, hybrid search and default request latency at growing corpus sizes (real, then synthetic documents), embedded and with --index in Weaviate, with bytes per document; ends with scale_ratio=X recall_at_100=R peak_rss_gb=G", benchWith("bench scale", backends.RunScale))
	register("bench docs", "live documents: upsert docs/s beside the load path, search p50 alone and under writes, restart after changed documents beside a cold build, bytes per document", benchWith("bench docs", backends.RunDocBench))
	register("bench load", "closed-loop load test of a running dmar serve: throughput, p50/p95/p99, errors and RSS by concurrency (CSV and a plot with --out)", runBenchLoad)
	register("bench answer", "POST /v1/answer's latency, reader tokens and EM/F1 from the documents' heads (before) beside the default path (selected evidence, graph answers) on the same questions; ends with answer_p50_s=P answer_speedup=X f1_delta=D [lo, hi]", benchWith("bench answer", backends.RunAnswer))
	register("bench textgraph", "documents/s of building the text graph of a corpus as the load did before (extract, then embed every new node, batch by batch) beside today's (the next batch extracted meanwhile, each label embedded once through the vector cache), cold and with the cache of an earlier load; the graphs must be equal", benchWith("bench textgraph", backends.RunTextGraphBench))
	register("bench ann", "the embedded index's vector graph on seeded vectors: recall@100 against the exact scan, search p50/p99, build time, bytes per vector, recall@100 after deletes and updates (a row of docs/ann.md)", runBenchANN)
	register("bench embed", "documents/s of corpus embedding per encoder, beside the chunked load path of before (bench_embed.go)", runBenchEmbed)
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

// runBenchANN parses the flags of a bench.ANN and runs it.
//
//	dmar bench ann --size 128000
func runBenchANN(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f bench.ANNFlags
	fs := newFlagSet("bench ann", stderr)
	f.Register(fs)
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return usageError{Msg: fmt.Sprintf("bench ann: unexpected arguments %q", fs.Args())}
	}
	_, err := f.Run(ctx, stdout)
	return cliErr(err)
}

// benchWith is a bench subcommand that parses its flags (F) beside the
// configuration's and hands both to run: bench failover, scale and docs.
func benchWith[F any, PF interface {
	*F
	Register(*flag.FlagSet)
}](name string, run func(context.Context, config.Config, F, io.Writer, io.Writer, *slog.Logger) error) func(context.Context, []string, io.Writer, io.Writer) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		var a appFlags
		var f F
		if _, err := a.parseArgs(name, args, stderr, PF(&f).Register); err != nil {
			return err
		}
		return cliErr(run(ctx, a.cfg, f, stdout, stderr, warnLogger(stderr)))
	}
}
