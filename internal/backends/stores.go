package backends

import (
	"context"
	"fmt"
	"io"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// OpenGraph is the one switch on the graph backend.
func OpenGraph(ctx context.Context, cfg config.Config, out io.Writer) (Graph, []Check, error) {
	if cfg.GraphBackend().Embedded() {
		g, key, err := Inputs(cfg, out).Graph(ctx)
		if err != nil {
			return Graph{}, nil, err
		}
		return Graph{Graph: g, Key: key}, []Check{{"graph", g.Ping}}, nil
	}
	st, err := neo4jkg.Open(ctx, Neo4j(cfg))
	if err != nil {
		return Graph{}, nil, err
	}
	return Graph{Graph: st, Neo4j: st}, []Check{{"neo4j", st.Ping}}, nil
}

// OpenIndex is the one switch on the search backend. With load set (dmar
// load corpus), the corpus is loaded into a remote index, and its links are
// written to a Neo4j graph as (:Document)-[:MENTIONS]->(:Entity); the
// embedded index loads itself whenever its inputs changed.
func OpenIndex(ctx context.Context, cfg config.Config, g Graph, enc scoring.Encoder, out io.Writer, load bool) (retrieval.Index, []Check, error) {
	if cfg.IndexBackend().Embedded() {
		x, err := embeddedIndex(ctx, cfg, g, enc, out, load)
		if err != nil {
			return nil, nil, err
		}
		return x, []Check{{"index", func(ctx context.Context) error { return ctx.Err() }}}, nil
	}
	open := weaviate.Open
	if load {
		open = weaviate.OpenOrCreate
	}
	w := cfg.Weaviate
	opts := []weaviate.Option{weaviate.WithEncoder(enc.Version()), weaviate.WithReplication(w.Shards, w.Replicas, w.ReadConsistency, w.WriteConsistency)}
	if k := cfg.Weaviate.APIKey; !k.IsZero() {
		opts = append(opts, weaviate.WithAPIKey(k.Reveal()))
	}
	st, err := open(ctx, cfg.Index, opts...)
	if err != nil {
		return nil, nil, err
	}
	check := []Check{{"weaviate", func(ctx context.Context) error { _, err := st.Count(ctx); return err }}}
	if load {
		if err := loadWeaviate(ctx, cfg, g, enc, st, out); err != nil {
			return nil, nil, err
		}
	}
	return st, check, nil
}

// loadWeaviate loads the corpus into st. The embedded snapshot doubles as
// the cache of links and vectors.
func loadWeaviate(ctx context.Context, cfg config.Config, g Graph, enc scoring.Encoder, st *weaviate.Store, out io.Writer) error {
	x, err := embeddedIndex(ctx, cfg, g, enc, out, true)
	if err != nil {
		return err
	}
	docs, err := x.ReadAll(ctx)
	if err != nil {
		return err
	}
	ls, err := st.Load(ctx, docs, Progress(cfg, out))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "load weaviate: read %d, imported %d, skipped as bad %d\n", ls.Read, ls.Imported, ls.Skipped)
	for _, p := range ls.Problems {
		fmt.Fprintln(out, "  skipped:", p)
	}
	return nil
}

// embeddedIndex is the index snapshot of the corpus linked with g (with
// load, its links are also written to a Neo4j graph).
func embeddedIndex(ctx context.Context, cfg config.Config, g Graph, enc scoring.Encoder, out io.Writer, load bool) (*memindex.Index, error) {
	in := Inputs(cfg, out)
	linker, key := linkerOf(ctx, cfg, g, out)
	x, err := in.Index(ctx, linker, key, enc)
	if err != nil || !load || g.Neo4j == nil {
		return x, err
	}
	docs, err := x.ReadAll(ctx)
	if err != nil {
		return nil, err
	}
	ms, err := locate(ctx, linker, docs)
	if err != nil {
		return nil, err
	}
	if err := g.Neo4j.Mentions().Replace(ctx, ms); err != nil {
		return nil, fmt.Errorf("write document links to neo4j: %w", err)
	}
	fmt.Fprintf(out, "load corpus: %d documents linked in neo4j\n", len(ms))
	return x, nil
}

// linkerOf is the graph documents are linked with, and its key. Linking
// through Neo4j costs about half a second a document; when the bundle Neo4j
// was loaded from is configured, the embedded graph gives identical links
// (a test checks it) in milliseconds, and shares the index snapshot.
// Loading that bundle reports its progress on out.
func linkerOf(ctx context.Context, cfg config.Config, g Graph, out io.Writer) (kg.Graph, string) {
	if g.Neo4j == nil {
		return g.Graph, g.Key
	}
	if mg, k, err := Inputs(cfg, out).Graph(ctx); err == nil {
		return mg, k
	}
	return g.Graph, cfg.Graph
}

// EntityRoots lists every entity of an embedded graph, for cache warm-up;
// nil for other graphs.
func EntityRoots(g kg.Graph) func() []string {
	mg, ok := g.(*memkg.Graph)
	if !ok {
		return nil
	}
	return func() []string {
		var roots []string
		for _, e := range mg.AllEntities() {
			roots = append(roots, e.QID)
		}
		return roots
	}
}
