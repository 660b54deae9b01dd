package main

import (
	"context"
	"io"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/bench"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
)

func init() {
	register("bench latency", "p50/p95 latency of DMAR (exact, Monte Carlo, question-aware) beside plain hybrid search, over a question file", runBenchLatency)
	register("bench subgraphs", "p50/p95 of one Subgraphs call of N seeded roots on the embedded graph beside --graph (Neo4j), same roots; ends with p50_ratio=R", runBenchSubgraphs)
	register("bench embed", "documents/s of corpus embedding per encoder, beside the chunked load path of before (bench_embed.go)", runBenchEmbed)
}

func runBenchLatency(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f bench.LatencyFlags
	if _, err := a.parseArgs("bench latency", args, stderr, f.Register); err != nil {
		return err
	}
	qs, err := f.ReadQuestions()
	if err != nil {
		return cliErr(err)
	}
	p, set, err := a.pipelineFor(ctx, stderr, warnLogger(stderr), nil)
	if err != nil {
		return err
	}
	defer set.Close()
	bs, err := set.LatencyBackends(ctx, p, stderr, warnLogger(stderr))
	if err != nil {
		return err
	}
	stop, err := f.StartProfile()
	if err != nil {
		return err
	}
	defer stop()
	return f.Latency(qs, bs).Run(ctx, stdout, stderr)
}

func runBenchSubgraphs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f bench.SubgraphFlags
	if _, err := a.parseArgs("bench subgraphs", args, stderr, f.Register); err != nil {
		return err
	}
	if a.cfg.GraphBackend().Embedded() {
		return usageError{Msg: "bench subgraphs: --graph must name the Neo4j to compare (neo4j://HOST:PORT or bolt://HOST:PORT)"}
	}
	emb, _, err := backends.Inputs(a.cfg, stderr).Graph(ctx)
	if err != nil {
		return err
	}
	st, err := neo4jkg.Open(ctx, backends.Neo4j(a.cfg))
	if err != nil {
		return err
	}
	defer st.Close(context.Background())
	return f.Run(ctx, emb, st, a.cfg.Graph, stdout, stderr)
}
