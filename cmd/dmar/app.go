package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/reformulate"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/state"
)

// appFlags are the settings every data-using subcommand shares, resolved
// from one configuration model (internal/config): defaults, then the YAML
// file (--config or DMAR_CONFIG), then DMAR_* variables, then flags. cfg is
// the one source of truth; subcommands read it.
type appFlags struct {
	cfg        config.Config
	configFile string
	serve      bool // register dmar serve's flags too
	// opened are the backends pipelineFor wired, for the document store.
	opened struct {
		graph openedGraph
		index retrieval.Index
	}
}

// newFlagSet is every subcommand's flag set: errors and usage on stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// flags is the flag set of a data-using subcommand: newFlagSet with the
// shared settings registered.
func (a *appFlags) flags(name string, stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet(name, stderr)
	a.register(fs)
	return fs
}

// defaultConfig is the built-in configuration: the embedded backend over
// ../shared/data/codexm-film, models where scripts/setup.sh puts them.
func defaultConfig() config.Config {
	data := ""
	if d, err := datapath.Dataset("codexm-film"); err == nil {
		data = d
	}
	return config.Default(config.CacheDir(os.Getenv), data)
}

// register adds --config and a flag for every setting that has one.
func (a *appFlags) register(fs *flag.FlagSet) {
	a.cfg = defaultConfig()
	fs.StringVar(&a.configFile, "config", "", "YAML configuration file (env DMAR_CONFIG); flags > DMAR_* env > file > defaults")
	config.Register(fs, &a.cfg, a.serve)
}

// parse parses the flags, then resolves the configuration in order of
// precedence and validates it, reporting every wrong field at once.
func (a *appFlags) parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	return a.resolve(fs, os.Getenv)
}

func (a *appFlags) resolve(fs *flag.FlagSet, getenv func(string) string) error {
	return config.Resolve(&a.cfg, defaultConfig(), fs, a.configFile, getenv)
}

func (a *appFlags) progressOut(w io.Writer) io.Writer {
	if a.cfg.Quiet {
		return nil
	}
	return w
}

// inputs are the embedded backend's inputs and snapshots.
func (a *appFlags) inputs(stderr io.Writer) state.Inputs {
	return state.Inputs{Bundle: a.cfg.BundleDir(), Corpus: a.cfg.CorpusFiles()[0], Extra: a.cfg.CorpusFiles()[1:], Dir: a.cfg.State, Log: a.progressOut(stderr)}
}

func (a *appFlags) neo4jConfig() neo4jkg.Config {
	// The password comes from the environment or a file, never flags.
	n := a.cfg.Neo4j
	return neo4jkg.Config{URI: a.cfg.Graph, User: n.User, Password: n.Password.Reveal(), Database: n.Database}
}

// models are the runtime's encoder, GNN and gate (onnx.OpenModels).
type models = onnx.Models

func (a *appFlags) openModels(log *slog.Logger) (*models, error) {
	mc := a.cfg.Models
	return onnx.OpenModels(onnx.ModelsConfig{Runtime: ortConfig(a.cfg.ORT),
		Encoder: mc.Encoder, EncoderDir: mc.EncoderFolder(), EncoderBatch: mc.EncoderBatch, DocTokens: mc.DocTokens, RelationEncoder: mc.RelationEncoder, RelationEncoderDir: mc.RelationEncoderFolder(), GNN: mc.GNN, Gate: mc.Gate, RelPrior: mc.RelPrior, EvidenceGate: mc.EvidenceGate}, log)
}

func ortConfig(o config.ORT) onnx.Config {
	return onnx.Config{LibPath: o.Lib, Device: o.Device, IntraOpThreads: o.Threads, CUDADeviceID: o.CUDADevice, CUDATF32: o.CUDATF32, Spin: o.Spin}
}

// pipelineFor wires a pipeline over the configured backends.
func (a *appFlags) pipelineFor(ctx context.Context, stderr io.Writer, log *slog.Logger, metrics pipeline.Metrics) (*pipeline.Pipeline, *models, []readyCheck, error) {
	m, err := a.openModels(log)
	if err != nil {
		return nil, nil, nil, err
	}
	g, checks, err := a.openGraph(ctx, stderr)
	if err == nil {
		var more []readyCheck
		var x retrieval.Index
		if x, more, err = a.openIndex(ctx, g, m.DocEncoder, stderr, false); err == nil {
			checks = append(checks, more...)
			var p *pipeline.Pipeline
			if p, err = pipeline.New(a.pipelineConfig(g, x, m, metrics, log)); err == nil {
				a.opened.graph, a.opened.index = g, x
				return p, m, checks, nil
			}
		}
	}
	m.Close()
	return nil, nil, nil, err
}

func (a *appFlags) pipelineConfig(g openedGraph, x retrieval.Index, m *models, metrics pipeline.Metrics, log *slog.Logger) pipeline.Config {
	// Every call to a remote backend gets its own time limit.
	be, _ := metrics.(errs.BackendErrors)
	d := a.cfg.Server.BackendTimeout
	graph := g.graph
	if g.neo4j != nil {
		graph = kg.WithTimeout(g.neo4j, "neo4j", d, be)
	}
	if w, ok := x.(*weaviate.Store); ok {
		x = retrieval.WithTimeout(w, "weaviate", d, be)
	}
	enc, gnn, gate := scoring.Timed(metrics, m.Encoder, m.GNN, m.Gate)
	if w := a.cfg.Server.EncoderBatchWindow; a.serve && w > 0 {
		// Concurrent requests' queries share encoder calls (serve only:
		// other subcommands ask one question at a time).
		enc = scoring.Batched(enc, scoring.BatchConfig{Window: w, MaxBatch: a.cfg.Models.EncoderBatch, MaxInFlight: a.cfg.Server.EncoderCalls, PerCaller: m.Encoder.Spec().PerText})
	}
	cfg := pipeline.Config{Graph: graph, Index: x, Encoder: enc, GNN: gnn, Gate: gate, Metrics: metrics, Logger: log,
		RelPrior:              m.RelPrior,
		EvidenceGate:          m.EvidenceGate,
		MaxShapleyEvaluations: int64(a.cfg.Server.MaxRequestCost)}
	cfg.Method = a.cfg.Method
	if m.RelationEncoder != m.Encoder {
		cfg.RelationEncoder = m.RelationEncoder
	}
	if c := a.cfg.Chat; c.BaseURL != "" {
		cfg.Chat = reformulate.Chat{BaseURL: c.BaseURL, Model: c.Model, APIKey: c.APIKey.Reveal(), Timeout: c.Timeout}
	}
	return cfg
}

type readyCheck struct {
	name string
	ping func(context.Context) error
}

type openedGraph struct {
	graph kg.Graph
	neo4j *neo4jkg.Store // set when the graph is Neo4j
	key   string         // fingerprint of the loaded bundle (embedded)
}

// openGraph is the one switch on the graph backend.
func (a *appFlags) openGraph(ctx context.Context, stderr io.Writer) (openedGraph, []readyCheck, error) {
	if a.cfg.GraphBackend().Embedded() {
		g, key, err := a.inputs(stderr).Graph(ctx)
		if err != nil {
			return openedGraph{}, nil, err
		}
		return openedGraph{graph: g, key: key}, []readyCheck{{"graph", g.Ping}}, nil
	}
	st, err := neo4jkg.Open(ctx, a.neo4jConfig())
	if err != nil {
		return openedGraph{}, nil, err
	}
	return openedGraph{graph: st, neo4j: st}, []readyCheck{{"neo4j", st.Ping}}, nil
}

// openIndex is the one switch on the search backend. With load set (dmar
// load corpus), the corpus is loaded into a remote index, and its links are
// written to a Neo4j graph as (:Document)-[:MENTIONS]->(:Entity); the
// embedded index loads itself whenever its inputs changed.
func (a *appFlags) openIndex(ctx context.Context, g openedGraph, enc scoring.Encoder, stderr io.Writer, load bool) (retrieval.Index, []readyCheck, error) {
	if a.cfg.IndexBackend().Embedded() {
		x, err := a.embeddedIndex(ctx, g, enc, stderr, load)
		if err != nil {
			return nil, nil, err
		}
		return x, []readyCheck{{"index", func(ctx context.Context) error { return ctx.Err() }}}, nil
	}
	open := weaviate.Open
	if load {
		open = weaviate.OpenOrCreate
	}
	opts := []weaviate.Option{weaviate.WithEncoder(enc.Version())}
	if k := a.cfg.Weaviate.APIKey; !k.IsZero() {
		opts = append(opts, weaviate.WithAPIKey(k.Reveal()))
	}
	st, err := open(ctx, a.cfg.Index, opts...)
	if err != nil {
		return nil, nil, err
	}
	check := []readyCheck{{"weaviate", func(ctx context.Context) error { _, err := st.Count(ctx); return err }}}
	if load {
		// The embedded snapshot doubles as the cache of links and vectors.
		x, err := a.embeddedIndex(ctx, g, enc, stderr, load)
		if err != nil {
			return nil, nil, err
		}
		ls, err := st.Load(ctx, x.All(), a.progressOut(stderr))
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(stderr, "load weaviate: read %d, imported %d, skipped as bad %d\n", ls.Read, ls.Imported, ls.Skipped)
		for _, p := range ls.Problems {
			fmt.Fprintln(stderr, "  skipped:", p)
		}
	}
	return st, check, nil
}

// embeddedIndex is the index snapshot of the corpus linked with g (with
// load, its links are also written to a Neo4j graph).
func (a *appFlags) embeddedIndex(ctx context.Context, g openedGraph, enc scoring.Encoder, stderr io.Writer, load bool) (*memindex.Index, error) {
	in := a.inputs(stderr)
	var linker kg.Graph = g.graph
	key := g.key
	if g.neo4j != nil {
		// Documents are linked at load time. Linking through Neo4j costs
		// about half a second a document; when the bundle Neo4j was loaded
		// from is configured, the embedded graph gives identical links (a
		// test checks it) in milliseconds, and shares the index snapshot.
		if mg, k, err := in.Graph(ctx); err == nil {
			linker, key = mg, k
		} else {
			key = a.cfg.Graph
		}
	}
	x, err := in.Index(ctx, linker, key, enc)
	if err != nil || !load || g.neo4j == nil {
		return x, err
	}
	docs := x.All()
	links := make([]neo4jkg.DocumentLink, len(docs))
	for i, d := range docs {
		links[i] = neo4jkg.DocumentLink{ID: d.ID, Title: d.Title, Entities: d.Entities}
	}
	if err := g.neo4j.PutDocuments(ctx, links); err != nil {
		return nil, fmt.Errorf("write document links to neo4j: %w", err)
	}
	fmt.Fprintf(stderr, "load corpus: %d documents linked in neo4j\n", len(links))
	return x, nil
}

// entityRoots lists every entity of an embedded graph, for cache warm-up;
// nil for other graphs.
func entityRoots(g kg.Graph) func() []string {
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
