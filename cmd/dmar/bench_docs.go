package main

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/docstore/docbench"
	"github.com/dmar-kg/dmar/internal/state"
)

func init() {
	register("bench docs", "live documents: upsert docs/s beside the load path, search p50 alone and under writes, restart after changed documents beside a cold build, bytes per document", runBenchDocs)
}

// dmar bench docs --data ../shared/data/codexm-film --restart ../shared/data/codexm
func runBenchDocs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	fs := a.flags("bench docs", stderr)
	n := fs.Int("docs", 128, "documents of the corpus to write for the throughput part")
	batch := fs.Int("batch", 64, "documents per PUT")
	searchTime := fs.Duration("search-time", 10*time.Second, "how long each search p50 is measured")
	restart := fs.String("restart", "", "data folder whose restart is timed after --changed documents change (e.g. ../shared/data/codexm); empty: skip")
	changed := fs.Int("changed", 10, "documents changed before the timed restart")
	indexOnly := fs.Bool("index-only", false, "measure only searches alone and under the index-only writers (the index sharing with the parent generation all, its prepared parts only, nothing), skipping the throughput, the store writers and the restart")
	cpuProfile := fs.String("cpuprofile", "", "path prefix: write the CPU profile of each slice of the search measure to PREFIX-phaseK-roundR.pprof")
	if err := a.parse(fs, args); err != nil {
		return err
	}
	log := newLogger(stderr, "warn")
	m, err := backends.OpenModels(a.cfg, log)
	if err != nil {
		return err
	}
	defer m.Close()
	in := backends.Inputs(a.cfg, stderr)
	g, key, err := in.Graph(ctx)
	if err != nil {
		return err
	}
	x, err := in.Index(ctx, g, key, m.DocEncoder)
	if err != nil {
		return err
	}
	docs, _, err := corpus.ReadFile(ctx, a.cfg.CorpusFile())
	if err != nil {
		return err
	}
	docs = docs[:min(*n, len(docs))]
	var queries []string
	for _, d := range x.All() {
		queries = append(queries, d.Title)
	}
	// The store's write encoder as dmar serve has it (write_priority low,
	// or idle), measured beside the encoder itself at normal priority.
	idle := a.cfg.ORT.WritePriority == "idle"
	bg, err := m.DocEncoder.Background(0, idle)
	if err != nil {
		return err
	}
	defer bg.Close()
	dir, err := os.MkdirTemp("", "dmar-bench-docs-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b := docbench.Bench{Graph: g, KGKey: key, Encoder: m.DocEncoder, Docs: docs, Batch: *batch, Search: x, Queries: queries[:min(100, len(queries))],
		SearchTime: *searchTime, WriteEncoder: bg, WriteLabel: map[bool]string{false: "nice 19", true: "nice 19, SCHED_IDLE"}[idle], CPUProfile: *cpuProfile, IndexOnly: *indexOnly, Changed: *changed, Dir: dir, SeedFrom: a.cfg.State}
	if *restart != "" {
		r := state.Inputs{Bundle: *restart, Corpus: *restart + "/corpus.jsonl"}
		b.Restart = &r
	}
	return b.Run(ctx, stdout, stderr)
}
