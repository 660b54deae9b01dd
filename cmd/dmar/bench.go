package main

import (
	"cmp"
	"context"
	"fmt"
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
	fs := a.flags("bench latency", stderr)
	f.Register(fs)
	if err := a.parse(fs, args); err != nil {
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
	given := bench.LatencyBackend{Name: "embedded", Detail: backendName(a.cfg.Graph, a.cfg.Index), Pipeline: p, WarmRoots: backends.EntityRoots(p.Graph())}
	b := bench.Latency{Backends: []bench.LatencyBackend{given}, Questions: qs, QuestionsPath: f.Questions, Cold: f.Cold, Warm: f.Warm}
	if !a.cfg.GraphBackend().Embedded() || !a.cfg.IndexBackend().Embedded() {
		// A remote deployment is timed beside the embedded one over the same
		// data and models, whose graph also gives Neo4j's warm-up roots.
		emb, err := set.Embedded(ctx, stderr)
		if err != nil {
			return fmt.Errorf("bench latency: the embedded backends to compare with: %w", err)
		}
		ep, err := emb.Pipeline(nil, warnLogger(stderr), false)
		if err != nil {
			return err
		}
		roots := backends.EntityRoots(ep.Graph())
		if given.WarmRoots == nil {
			given.WarmRoots = roots
		}
		given.Name = "remote"
		b.Backends = []bench.LatencyBackend{{Name: "embedded", Detail: backendName("", ""), Pipeline: ep, WarmRoots: roots}, given}
	}
	stop, err := f.StartProfile()
	if err != nil {
		return err
	}
	defer stop()
	return b.Run(ctx, stdout, stderr)
}

// backendName names a graph and index setting in reports.
func backendName(graph, index string) string {
	if graph == "" && index == "" {
		return "the embedded graph and index"
	}
	return cmp.Or(graph, "embedded graph") + " + " + cmp.Or(index, "embedded index")
}

func runBenchSubgraphs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f bench.SubgraphFlags
	fs := a.flags("bench subgraphs", stderr)
	f.Register(fs)
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if a.cfg.GraphBackend().Embedded() {
		return usageError{"bench subgraphs: --graph must name the Neo4j to compare (neo4j://HOST:PORT or bolt://HOST:PORT)"}
	}
	emb, _, err := a.inputs(stderr).Graph(ctx)
	if err != nil {
		return err
	}
	st, err := neo4jkg.Open(ctx, backends.Neo4j(a.cfg))
	if err != nil {
		return err
	}
	defer st.Close(context.Background())
	if f.Questions != "" {
		qs, err := bench.ReadQuestions(f.Questions, 0)
		if err != nil {
			return err
		}
		l := bench.Linking{Embedded: emb, Given: st, GivenName: a.cfg.Graph, Texts: qs, Rounds: 3}
		if err := l.Run(ctx, stdout); err != nil {
			return err
		}
	}
	var pool []string
	for _, e := range emb.AllEntities() {
		pool = append(pool, e.QID)
	}
	return f.Subgraphs(emb, st, a.cfg.Graph, pool).Run(ctx, stdout, stderr)
}
