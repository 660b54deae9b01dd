package backends

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/dmar-kg/dmar/internal/bench"
	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
)

// RunFailover runs dmar bench failover: a bench.Failover through the
// pipeline and the document store dmar serve would build over cfg's
// Weaviate cluster (its corpus loaded first), with the cluster's nodes
// from cfg.Index. Flags that cannot make a run are errs.Invalid.
func RunFailover(ctx context.Context, cfg config.Config, f bench.FailoverFlags, stdout, stderr io.Writer, log *slog.Logger) error {
	if cfg.IndexBackend().Embedded() {
		return errs.E(errs.Invalid, "bench failover: --index must name a Weaviate cluster (weaviate://HOST:PORT,HOST:PORT,.../Class)")
	}
	wc, err := weaviate.ParseURL(cfg.Index)
	if err != nil {
		return errs.E(errs.Invalid, "bench failover: %v", err)
	}
	nodes := wc.Hosts
	if len(nodes) == 0 {
		nodes = []string{wc.URL}
	}
	if err := f.Check(len(nodes)); err != nil {
		return err
	}
	if cfg.Weaviate.Replicas == 0 {
		cfg.Weaviate.Replicas = len(nodes) // every node holds every shard: any one can be lost
	}
	queries, texts, err := f.Inputs(ctx, cfg.CorpusFiles())
	if err != nil {
		return err
	}
	set, err := OpenLoaded(ctx, cfg, stderr, log)
	if err != nil {
		return err
	}
	defer set.Close()
	p, err := set.Pipeline(nil, log, false)
	if err != nil {
		return err
	}
	docs, err := set.Documents(ctx, log)
	if err != nil {
		return err
	}
	defer docs.Close()
	st, ok := set.Index.(*weaviate.Store)
	if !ok {
		return fmt.Errorf("bench failover: the index is a %T, not Weaviate", set.Index)
	}
	opts, err := pipeline.Defaults().WithMethod(cfg.Method)
	if err != nil {
		return err
	}
	timeout := cfg.Server.RequestTimeout // each request's, as dmar serve's
	b := bench.Failover{Nodes: nodes, Kills: f.KillOrder(), Queries: queries, Texts: texts,
		Readers: f.Readers, Writers: f.Writers, Settle: f.Settle, Outage: f.Outage, CatchUp: f.CatchUp,
		RunID: fmt.Sprintf("failover-%d", time.Now().UnixNano()),
		Retrieve: func(ctx context.Context, q string) error {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			_, err := p.Retrieve(ctx, q, opts)
			return err
		},
		Write: func(ctx context.Context, id, title, text string) error {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			res, err := docs.Put(ctx, []docstore.Input{{ID: id, Title: title, Text: text}})
			if err == nil && len(res.Rejected) > 0 {
				err = fmt.Errorf("document %s rejected: %s", id, res.Rejected[0].Reason)
			}
			return err
		},
		Missing:     func(ctx context.Context, ids []string) ([]string, error) { return st.Missing(ctx, ids, weaviate.All) },
		NodeObjects: st.NodeObjects,
	}
	_, err = b.Run(ctx, stdout)
	return err
}
