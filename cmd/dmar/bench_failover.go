package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/bench"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
)

func init() {
	register("bench failover", "retrieve requests and document writes against a Weaviate cluster while its nodes are killed -9 and restarted in turn; ends with failover requests=N failed=F acked_writes=W lost=L p99_ms=P", runBenchFailover)
}

// runBenchFailover: dmar bench failover --index weaviate://H1,H2,H3/Class?grpc=... --data DIR
func runBenchFailover(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f bench.FailoverFlags
	fs := a.flags("bench failover", stderr)
	f.Register(fs)
	if err := a.parse(fs, args); err != nil {
		return err
	}
	if a.cfg.IndexBackend().Embedded() {
		return usageError{Msg: "bench failover: --index must name a Weaviate cluster (weaviate://HOST:PORT,HOST:PORT,.../Class)"}
	}
	wc, err := weaviate.ParseURL(a.cfg.Index)
	if err != nil {
		return cliErr(err)
	}
	nodes := wc.Hosts
	if len(nodes) == 0 {
		nodes = []string{wc.URL}
	}
	if err := f.Check(len(nodes)); err != nil {
		return cliErr(err)
	}
	if a.cfg.Weaviate.Replicas == 0 {
		a.cfg.Weaviate.Replicas = len(nodes) // every node holds every shard: any one can be lost
	}
	queries, texts, err := f.Inputs(ctx, a.cfg.CorpusFiles())
	if err != nil {
		return err
	}
	log := warnLogger(stderr)
	set, err := backends.OpenLoaded(ctx, a.cfg, stderr, log)
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
	st := set.Index.(*weaviate.Store)
	opts, err := pipeline.Defaults().WithMethod(a.cfg.Method)
	if err != nil {
		return err
	}
	timeout := a.cfg.Server.RequestTimeout // each request's, as dmar serve's
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
