package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
)

// backendErrors counts failed backend calls (server.Metrics implements it).
type backendErrors interface {
	BackendError(backend, op string)
}

// bounded runs one backend call under its own time limit. A call that runs
// past it while the request still has time is an outage of that backend
// (errs.Unavailable): the pipeline degrades or the API answers 503.
func bounded(ctx context.Context, d time.Duration, backend, op string, m backendErrors, call func(context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	err := call(cctx)
	if err == nil {
		return nil
	}
	if m != nil {
		m.BackendError(backend, op)
	}
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return errs.Unavail(fmt.Errorf("%s %s: no answer within %s: %w", backend, op, d, err), backend)
	}
	return err
}

// timedNeo4j is the Neo4j graph with a time limit on every call. Embedding
// the store keeps its other methods (SubgraphStatement, Ping).
type timedNeo4j struct {
	*neo4jkg.Store
	d time.Duration
	m backendErrors
}

var (
	_ kg.Graph     = timedNeo4j{}
	_ kg.Inspector = timedNeo4j{}
	_ kg.Recorder  = timedNeo4j{}
)

func (t timedNeo4j) Entities(ctx context.Context, qids []string) (out map[string]kg.Entity, err error) {
	err = bounded(ctx, t.d, "neo4j", "entities", t.m, func(ctx context.Context) error { out, err = t.Store.Entities(ctx, qids); return err })
	return out, err
}

func (t timedNeo4j) Link(ctx context.Context, text string) (out []kg.Mention, err error) {
	err = bounded(ctx, t.d, "neo4j", "link", t.m, func(ctx context.Context) error { out, err = t.Store.Link(ctx, text); return err })
	return out, err
}

func (t timedNeo4j) Subgraphs(ctx context.Context, roots []string, p kg.SubgraphParams) (out map[string]kg.Subgraph, err error) {
	err = bounded(ctx, t.d, "neo4j", "subgraphs", t.m, func(ctx context.Context) error { out, err = t.Store.Subgraphs(ctx, roots, p); return err })
	return out, err
}

func (t timedNeo4j) RecordRetrieval(ctx context.Context, r kg.RetrievalRecord) error {
	return bounded(ctx, t.d, "neo4j", "record", t.m, func(ctx context.Context) error { return t.Store.RecordRetrieval(ctx, r) })
}

// timedWeaviate is the Weaviate index with a time limit on every call.
type timedWeaviate struct {
	*weaviate.Store
	d time.Duration
	m backendErrors
}

var _ retrieval.Index = timedWeaviate{}

func (t timedWeaviate) Search(ctx context.Context, q retrieval.Query) (out []retrieval.Hit, err error) {
	err = bounded(ctx, t.d, "weaviate", "search", t.m, func(ctx context.Context) error { out, err = t.Store.Search(ctx, q); return err })
	return out, err
}

func (t timedWeaviate) Documents(ctx context.Context, ids []string) (out []retrieval.Document, err error) {
	err = bounded(ctx, t.d, "weaviate", "documents", t.m, func(ctx context.Context) error { out, err = t.Store.Documents(ctx, ids); return err })
	return out, err
}
