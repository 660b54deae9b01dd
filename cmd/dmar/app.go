package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/ingest"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/reformulate"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/loaders/corpus"
)

// appFlags are the settings every data-using subcommand shares, resolved
// from one configuration model (internal/config): defaults, then the YAML
// file (--config or DMAR_CONFIG), then DMAR_* variables, then flags.
// The fields below cfg are copies the subcommands read.
type appFlags struct {
	cfg        config.Config
	configFile string
	serve      bool // register dmar serve's flags too

	data       string // a KG bundle + corpus.jsonl folder
	kgDir      string
	corpusPath string
	state      string
	graph      string // "embedded" or a neo4j:// URI
	index      string // "embedded" or a weaviate:// URL
	ort        onnx.Config
	encoderDir string
	gnnPath    string
	gatePath   string
	docTokens  int
	chatURL    string
	chatModel  string
	chatTO     time.Duration
	quiet      bool
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// defaultConfig is the built-in configuration: the embedded backend over
// ../shared/data/codexm-film, models where scripts/setup.sh puts them.
func defaultConfig() config.Config {
	data := ""
	if d, err := datapath.Dataset("codexm-film"); err == nil {
		data = d
	}
	c := config.Default(onnx.CacheDir(), data)
	c.ORT.Lib = onnx.DefaultLibPath()
	c.Models.EncoderDir = onnx.DefaultEncoderDir()
	return c
}

// register adds --config and a flag for every setting that has one.
func (a *appFlags) register(fs *flag.FlagSet) {
	a.cfg = defaultConfig()
	fs.StringVar(&a.configFile, "config", "", "YAML configuration file (env DMAR_CONFIG); flags > DMAR_* env > file > defaults")
	for _, s := range config.Settings(&a.cfg) {
		if s.Flag == "" || (s.Serve && !a.serve) {
			continue
		}
		fs.Var(s.Value, s.Flag, fmt.Sprintf("%s (env %s, %s in the file)", s.Usage, s.Env, s.Key))
	}
}

// parse parses the flags, then resolves the configuration in order of
// precedence and validates it, reporting every wrong field at once.
func (a *appFlags) parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if err := a.resolve(fs, os.Getenv); err != nil {
		return err
	}
	a.sync()
	return nil
}

// resolve rebuilds a.cfg from defaults, file and environment, then sets the
// flags given on the command line again so that they win.
func (a *appFlags) resolve(fs *flag.FlagSet, getenv func(string) string) error {
	given := map[string]string{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = f.Value.String() })
	a.cfg = defaultConfig()
	var ps config.Problems
	file := a.configFile
	if file == "" {
		file = getenv("DMAR_CONFIG")
	}
	if file != "" {
		ps = append(ps, config.File(&a.cfg, file)...)
	}
	ps = append(ps, config.Env(&a.cfg, getenv)...)
	for name, v := range given {
		if name == "config" || fs.Lookup(name) == nil {
			continue
		}
		if _, ok := flagTarget(&a.cfg, name); !ok {
			continue // a subcommand's own flag, not a setting
		}
		if err := fs.Set(name, v); err != nil {
			ps = append(ps, config.Problem{Field: "--" + name, Msg: err.Error()})
		}
	}
	ps = append(ps, a.cfg.Validate()...)
	return ps.Err()
}

func flagTarget(c *config.Config, name string) (config.Setting, bool) {
	for _, s := range config.Settings(c) {
		if s.Flag == name {
			return s, true
		}
	}
	return config.Setting{}, false
}

// sync copies the resolved configuration into the fields subcommands read.
func (a *appFlags) sync() {
	c := &a.cfg
	a.data, a.kgDir, a.corpusPath, a.state = c.Data, c.KG, c.Corpus, c.State
	a.graph, a.index = c.Graph, c.Index
	a.ort = onnx.Config{LibPath: c.ORT.Lib, Device: c.ORT.Device, IntraOpThreads: c.ORT.Threads, CUDADeviceID: c.ORT.CUDADevice, CUDATF32: c.ORT.CUDATF32}
	a.encoderDir, a.gnnPath, a.gatePath, a.docTokens = c.Models.EncoderDir, c.Models.GNN, c.Models.Gate, c.Models.DocTokens
	a.chatURL, a.chatModel, a.chatTO = c.Chat.BaseURL, c.Chat.Model, c.Chat.Timeout
	a.quiet = c.Quiet
}

func (a *appFlags) bundleDir() string {
	if a.kgDir != "" {
		return a.kgDir
	}
	return a.data
}

func (a *appFlags) corpusFile() string {
	if a.corpusPath != "" {
		return a.corpusPath
	}
	return filepath.Join(a.data, "corpus.jsonl")
}

func (a *appFlags) progressOut(w io.Writer) io.Writer {
	if a.quiet {
		return nil
	}
	return w
}

// fingerprint identifies input files by their content (and the versions of
// what processed them), so that a changed input is loaded again and an
// unchanged one, in any folder, is not.
func fingerprint(files []string, versions ...string) (string, error) {
	h := sha256.New()
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return "", fmt.Errorf("input %s: %w", p, err)
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("input %s: %w", p, err)
		}
		fmt.Fprintf(h, "|%s\n", filepath.Base(p))
	}
	for _, v := range versions {
		fmt.Fprintf(h, "v|%s\n", v)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func (a *appFlags) kgFiles() []string {
	d := a.bundleDir()
	return []string{filepath.Join(d, "triples.tsv"), filepath.Join(d, "entities.jsonl"), filepath.Join(d, "relations.json")}
}

// loadGraph returns the embedded graph, from its snapshot when the bundle is
// unchanged, else parsed from the bundle and snapshotted.
func (a *appFlags) loadGraph(ctx context.Context, log io.Writer) (*memkg.Graph, string, error) {
	key, err := fingerprint(a.kgFiles())
	if err != nil {
		return nil, "", fmt.Errorf("knowledge graph: %w (set --data or --kg)", err)
	}
	snap := filepath.Join(a.state, "kg-"+key+".gob")
	if g, err := memkg.Load(snap); err == nil {
		return g, key, nil
	}
	start := time.Now()
	b, err := bundle.Read(ctx, a.bundleDir())
	if err != nil {
		return nil, "", err
	}
	g := memkg.FromBundle(b)
	if err := g.Save(snap); err != nil {
		return nil, "", err
	}
	st := b.Stats
	if log != nil {
		fmt.Fprintf(log, "load kg: %s in %s\n  entities: read %d, loaded %d, skipped as bad %d\n  triples: read %d, loaded %d, duplicates %d, skipped as bad %d\n",
			a.bundleDir(), time.Since(start).Round(time.Millisecond), st.EntitiesRead, st.EntitiesLoaded, st.EntitiesBad,
			st.TriplesRead, st.TriplesLoaded, st.TriplesDuplicate, st.TriplesBad)
		for _, p := range st.Problems {
			fmt.Fprintln(log, "  skipped:", p)
		}
	}
	return g, key, nil
}

// loadIndex returns the embedded index, from its snapshot when the corpus,
// the graph and the encoder are unchanged, else linked, embedded and saved.
func (a *appFlags) loadIndex(ctx context.Context, g kg.Graph, kgKey string, enc scoring.Encoder, log io.Writer) (*memindex.Index, error) {
	key, err := fingerprint([]string{a.corpusFile()}, kgKey, enc.Version())
	if err != nil {
		return nil, fmt.Errorf("corpus: %w (set --data or --corpus)", err)
	}
	snap := filepath.Join(a.state, "index-"+key+".gob")
	if x, err := memindex.Load(snap, memindex.DefaultParams()); err == nil {
		return x, nil
	}
	docs, err := a.prepareCorpus(ctx, g, enc, log)
	if err != nil {
		return nil, err
	}
	x := memindex.New(memindex.DefaultParams())
	if err := x.Put(ctx, docs); err != nil {
		return nil, err
	}
	if err := x.Save(snap); err != nil {
		return nil, err
	}
	x.Build()
	return x, nil
}

// prepareCorpus reads, links and embeds the corpus, with progress and counts.
func (a *appFlags) prepareCorpus(ctx context.Context, g kg.Graph, enc scoring.Encoder, log io.Writer) ([]retrieval.Document, error) {
	docs, st, err := corpus.ReadFile(ctx, a.corpusFile())
	if err != nil {
		return nil, err
	}
	m := progress.New(log, "load corpus", "docs", len(docs))
	if err := ingest.Prepare(ctx, g, enc, docs, ingest.Options{Meter: m}); err != nil {
		return nil, err
	}
	m.Done()
	if log != nil {
		fmt.Fprintf(log, "load corpus: %s\n  read %d, loaded %d, duplicates %d, skipped as bad %d\n", a.corpusFile(), st.Read, st.Loaded, st.Duplicate, st.Bad)
		for _, p := range st.Problems {
			fmt.Fprintln(log, "  skipped:", p)
		}
	}
	return docs, nil
}

// models opens the ONNX Runtime and the three models. A missing GNN or gate
// file is not an error: the pipeline then uses the GED heuristic or fixed
// weights and says so in every response's fallbacks.
type models struct {
	rt      *onnx.Runtime
	enc     *onnx.Encoder // queries
	docEnc  *onnx.Encoder // documents at load time (same session, truncated)
	gnn     scoring.GraphEncoder
	gate    scoring.Gate
	closers []func() error
}

func (m *models) Close() {
	for _, c := range m.closers {
		_ = c()
	}
}

func (a *appFlags) openModels(log *slog.Logger) (*models, error) {
	rt, err := onnx.Open(a.ort)
	if err != nil {
		return nil, fmt.Errorf("%w (run scripts/setup.sh, or set DMAR_ORT_LIB)", err)
	}
	enc, err := onnx.NewEncoder(rt, a.encoderDir)
	if err != nil {
		return nil, err
	}
	m := &models{rt: rt, enc: enc, docEnc: enc.Truncated(a.docTokens), closers: []func() error{enc.Close}}
	if err := a.openStructuralModels(rt, m, log); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

// pipelineFor wires a pipeline over the configured backends.
func (a *appFlags) pipelineFor(ctx context.Context, stderr io.Writer, log *slog.Logger, metrics pipeline.Metrics) (*pipeline.Pipeline, *models, []readyCheck, error) {
	m, err := a.openModels(log)
	if err != nil {
		return nil, nil, nil, err
	}
	g, checks, err := a.openGraph(ctx, stderr)
	if err != nil {
		m.Close()
		return nil, nil, nil, err
	}
	x, more, err := a.openIndex(ctx, g, m.docEnc, stderr, false)
	if err != nil {
		m.Close()
		return nil, nil, nil, err
	}
	checks = append(checks, more...)
	// Every call to a remote backend gets its own time limit.
	be, _ := metrics.(backendErrors)
	graph := g.graph
	if g.neo4j != nil {
		graph = timedNeo4j{Store: g.neo4j, d: a.cfg.Server.BackendTimeout, m: be}
	}
	if w, ok := x.(*weaviate.Store); ok {
		x = timedWeaviate{Store: w, d: a.cfg.Server.BackendTimeout, m: be}
	}
	enc, gnn, gate := instrumentModels(metrics, m.enc, m.gnn, m.gate)
	cfg := pipeline.Config{Graph: graph, Index: x, Encoder: enc, GNN: gnn, Gate: gate, Metrics: metrics, Logger: log}
	if a.chatURL != "" {
		cfg.Chat = reformulate.Chat{BaseURL: a.chatURL, Model: a.chatModel, APIKey: a.cfg.Chat.APIKey.Reveal(), Timeout: a.chatTO}
	}
	p, err := pipeline.New(cfg)
	if err != nil {
		m.Close()
		return nil, nil, nil, err
	}
	return p, m, checks, nil
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
	switch {
	case a.graph == "embedded" || a.graph == "":
		g, key, err := a.loadGraph(ctx, a.progressOut(stderr))
		if err != nil {
			return openedGraph{}, nil, err
		}
		return openedGraph{graph: g, key: key}, []readyCheck{{"graph", g.Ping}}, nil
	case strings.HasPrefix(a.graph, "neo4j://") || strings.HasPrefix(a.graph, "bolt://") || strings.HasPrefix(a.graph, "neo4j+s://"):
		// The password comes from the environment or a file, never flags.
		cfg := neo4jkg.Config{URI: a.graph, User: a.cfg.Neo4j.User, Password: a.cfg.Neo4j.Password.Reveal(), Database: a.cfg.Neo4j.Database}
		st, err := neo4jkg.Open(ctx, cfg)
		if err != nil {
			return openedGraph{}, nil, err
		}
		return openedGraph{graph: st, neo4j: st}, []readyCheck{{"neo4j", st.Ping}}, nil
	}
	return openedGraph{}, nil, usageError{fmt.Sprintf("--graph %q: want embedded or neo4j://HOST:PORT", a.graph)}
}

// openIndex is the one switch on the search backend. With load set (dmar
// load corpus), the corpus is loaded into a remote index, and its links are
// written to a Neo4j graph as (:Document)-[:MENTIONS]->(:Entity); the
// embedded index loads itself whenever its inputs changed.
func (a *appFlags) openIndex(ctx context.Context, g openedGraph, enc scoring.Encoder, stderr io.Writer, load bool) (retrieval.Index, []readyCheck, error) {
	embedded := func() (*memindex.Index, error) {
		linker, key := g.graph, g.key
		if g.neo4j != nil {
			// Documents are linked at load time. Linking through Neo4j costs
			// about half a second a document; when the bundle Neo4j was loaded
			// from is configured, the embedded graph gives identical links (a
			// test checks it) in milliseconds, and shares the index snapshot.
			if mg, k, err := a.loadGraph(ctx, a.progressOut(stderr)); err == nil {
				linker, key = mg, k
			} else {
				key = a.graph
			}
		}
		x, err := a.loadIndex(ctx, linker, key, enc, a.progressOut(stderr))
		if err != nil {
			return nil, err
		}
		if load && g.neo4j != nil {
			docs := x.All()
			links := make([]neo4jkg.DocumentLink, len(docs))
			for i, d := range docs {
				links[i] = neo4jkg.DocumentLink{ID: d.ID, Title: d.Title, Entities: d.Entities}
			}
			if err := g.neo4j.PutDocuments(ctx, links); err != nil {
				return nil, fmt.Errorf("write document links to neo4j: %w", err)
			}
			fmt.Fprintf(stderr, "load corpus: %d documents linked in neo4j\n", len(links))
		}
		return x, nil
	}
	switch {
	case a.index == "embedded" || a.index == "":
		x, err := embedded()
		if err != nil {
			return nil, nil, err
		}
		return x, []readyCheck{{"index", func(ctx context.Context) error { return ctx.Err() }}}, nil
	case strings.HasPrefix(a.index, "weaviate://") || strings.HasPrefix(a.index, "weaviates://") || strings.HasPrefix(a.index, "http://"):
		open := weaviate.Open
		if load {
			open = weaviate.OpenOrCreate
		}
		var opts []weaviate.Option
		if !a.cfg.Weaviate.APIKey.IsZero() {
			opts = append(opts, weaviate.WithAPIKey(a.cfg.Weaviate.APIKey.Reveal()))
		}
		st, err := open(ctx, a.index, opts...)
		if err != nil {
			return nil, nil, err
		}
		check := []readyCheck{{"weaviate", func(ctx context.Context) error { _, err := st.Count(ctx); return err }}}
		if load {
			// The embedded snapshot doubles as the cache of links and vectors.
			x, err := embedded()
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
	return nil, nil, usageError{fmt.Sprintf("--index %q: want embedded or weaviate://HOST:PORT/Class", a.index)}
}
