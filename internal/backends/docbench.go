package backends

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/docstore/docbench"
	"github.com/dmar-kg/dmar/internal/state"
)

// RunDocBench runs dmar bench docs: a docbench.Bench over the embedded
// graph and index of cfg, the first --docs documents of its corpus, and the
// store's write encoder as dmar serve has it.
func RunDocBench(ctx context.Context, cfg config.Config, f docbench.Flags, stdout, stderr io.Writer, log *slog.Logger) error {
	m, err := OpenModels(cfg, log)
	if err != nil {
		return err
	}
	defer m.Close()
	in := Inputs(cfg, stderr)
	g, key, err := in.Graph(ctx)
	if err != nil {
		return err
	}
	x, err := in.Index(ctx, g, key, m.DocEncoder)
	if err != nil {
		return err
	}
	docs, _, err := corpus.ReadFile(ctx, cfg.CorpusFile())
	if err != nil {
		return err
	}
	docs = docs[:min(f.Docs, len(docs))]
	var queries []string
	for _, d := range x.All() {
		queries = append(queries, d.Title)
	}
	// The store's write encoder as dmar serve has it (write_priority low,
	// or idle), measured beside the encoder itself at normal priority.
	idle := cfg.ORT.WritePriority == "idle"
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
	b := docbench.Bench{Graph: g, KGKey: key, Encoder: m.DocEncoder, Docs: docs, Batch: f.Batch, Search: x, Queries: queries[:min(100, len(queries))],
		SearchTime: f.SearchTime, WriteEncoder: bg, WriteLabel: map[bool]string{false: "nice 19", true: "nice 19, SCHED_IDLE"}[idle], CPUProfile: f.CPUProfile, IndexOnly: f.IndexOnly, Changed: f.Changed, Dir: dir, SeedFrom: cfg.State}
	if f.Restart != "" {
		r := state.Inputs{Bundle: f.Restart, Corpus: f.Restart + "/corpus.jsonl"}
		b.Restart = &r
	}
	return b.Run(ctx, stdout, stderr)
}
