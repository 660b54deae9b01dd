package main

import (
	"context"
	"io"

	"github.com/dmar-kg/dmar/internal/backends"
	"github.com/dmar-kg/dmar/internal/bench"
)

func init() {
	register("bench failover", "retrieve requests and document writes against a Weaviate cluster while its nodes are killed -9 and restarted in turn; ends with failover requests=N failed=F acked_writes=W lost=L p99_ms=P", runBenchFailover)
}

// dmar bench failover --index weaviate://H1,H2,H3/Class?grpc=... --data DIR
func runBenchFailover(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var a appFlags
	var f bench.FailoverFlags
	if _, err := a.parseArgs("bench failover", args, stderr, f.Register); err != nil {
		return err
	}
	return cliErr(backends.RunFailover(ctx, a.cfg, f, stdout, stderr, warnLogger(stderr)))
}
