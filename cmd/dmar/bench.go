package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"

	"github.com/dmar-kg/dmar/internal/bench"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
)

func init() {
	register("bench latency", "p50/p95 latency of DMAR (exact, Monte Carlo, question-aware) beside plain hybrid search, over a question file", runBenchLatency)
	register("bench subgraphs", "p50/p95 of one Subgraphs call of N seeded roots on the embedded graph beside --graph (Neo4j), same roots; ends with p50_ratio=R", runBenchSubgraphs)
	register("bench embed", "documents/s of corpus embedding per encoder, beside the chunked load path of before (bench_embed.go)", runBenchEmbed)
}

func runBenchLatency(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := a.flags("bench latency", stderr)
	qpath := fs.String("questions", "", "JSONL file with a question field per line (e.g. ../shared/data/kgqa/dev.jsonl)")
	limit := fs.Int("limit", 0, "use only the first N questions")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file (go tool pprof)")
	warm := fs.Bool("warm", true, "first cache every entity's subgraph and GNN embedding, as a long-running server's cache holds them (with --graph neo4j://..., the entities of the --data bundle); false: time a cold cache")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if *qpath == "" {
		return usageError{"bench latency: --questions is required"}
	}
	qs, err := bench.ReadQuestions(*qpath, *limit)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p, m, _, err := a.pipelineFor(ctx, stderr, log, nil)
	if err != nil {
		return err
	}
	defer m.Close()
	b := bench.Latency{Pipeline: p, Questions: qs, QuestionsPath: *qpath, Index: a.cfg.Index, Graph: a.cfg.Graph}
	if *warm {
		// Neo4j: the same roots as the embedded run's, read from the bundle
		// the graph was loaded from.
		if b.WarmRoots = entityRoots(p.Graph()); b.WarmRoots == nil {
			emb, _, err := a.inputs(stderr).Graph(ctx)
			if err != nil {
				return fmt.Errorf("bench latency: the warm-up's entities: %w", err)
			}
			b.WarmRoots = entityRoots(emb)
		}
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return fmt.Errorf("bench latency: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("bench latency: cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	return b.Run(ctx, stdout, stderr)
}

func runBenchSubgraphs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := a.flags("bench subgraphs", stderr)
	def := kg.DefaultSubgraphParams()
	seeds := fs.Int("seeds", 300, "roots per Subgraphs call, drawn from the graph's entities")
	rounds := fs.Int("rounds", 20, "timed calls per graph (each with a fresh draw), after one warm-up")
	seed := fs.Uint64("seed", 1, "seed of the draws")
	hops := fs.Int("hops", def.Hops, "subgraph hops (the graph-recall channel uses 1 and 2)")
	maxNodes := fs.Int("max-nodes", def.MaxNodes, "node cap per subgraph (the graph-recall channel uses 4000)")
	hub := fs.Int("hub-degree", def.HubDegree, "hub cap")
	below := fs.Uint64("roots-below", 0, "draw the roots only among QIDs below Q<N> (1000000000: the real entities of scripts/bench/gengraph's graphs); 0: all")
	channel := fs.Bool("channel", false, "time the graph channel's call (kg.Neighbourhoods: hub roots as stars, the walked nodes' edges only; the channel's shape is --hops 2 --max-nodes 4000) instead of Subgraphs")
	questions := fs.String("questions", "", "also time Link of every question of this JSONL file (kgqa format) on both graphs, 3 passes, reported before the subgraphs")
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
	st, err := neo4jkg.Open(ctx, a.neo4jConfig())
	if err != nil {
		return err
	}
	defer st.Close(context.Background())
	pool := make([]string, 0, len(emb.AllEntities()))
	for _, e := range emb.AllEntities() {
		pool = append(pool, e.QID)
	}
	pool = bench.QIDsBelow(pool, *below)
	if *questions != "" {
		qs, err := bench.ReadQuestions(*questions, 0)
		if err != nil {
			return err
		}
		l := bench.Linking{Embedded: emb, Given: st, GivenName: a.cfg.Graph, Texts: qs, Rounds: 3}
		if err := l.Run(ctx, stdout); err != nil {
			return err
		}
	}
	b := bench.Subgraphs{Embedded: emb, Given: st, GivenName: a.cfg.Graph, Pool: pool, Seeds: *seeds, Rounds: *rounds, Seed: *seed,
		Params: kg.SubgraphParams{Hops: *hops, MaxNodes: *maxNodes, HubDegree: *hub}, Channel: *channel}
	return b.Run(ctx, stdout, stderr)
}
