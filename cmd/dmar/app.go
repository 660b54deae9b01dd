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
	"strconv"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/ingest"
	"github.com/dmar-kg/dmar/internal/kg"
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
	"github.com/dmar-kg/dmar/loaders/bundle"
	"github.com/dmar-kg/dmar/loaders/corpus"
)

// appFlags are the settings every data-using subcommand shares. Flags win
// over DMAR_* environment variables, which win over defaults.
type appFlags struct {
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

func envInt(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func (a *appFlags) register(fs *flag.FlagSet) {
	def := ""
	if d, err := datapath.Dataset("codexm-film"); err == nil {
		def = d
	}
	a.ort = onnx.ConfigFromEnv()
	fs.StringVar(&a.data, "data", env("DMAR_DATA", def), "folder with a KG bundle (triples.tsv, entities.jsonl, relations.json) and corpus.jsonl (env DMAR_DATA; default ../shared/data/codexm-film)")
	fs.StringVar(&a.kgDir, "kg", os.Getenv("DMAR_KG"), "KG bundle folder, when not --data (env DMAR_KG)")
	fs.StringVar(&a.corpusPath, "corpus", os.Getenv("DMAR_CORPUS"), "corpus JSONL file, when not --data/corpus.jsonl (env DMAR_CORPUS)")
	fs.StringVar(&a.state, "state", env("DMAR_STATE", filepath.Join(onnx.CacheDir(), "state")), "folder for loaded graphs and indexes, keyed by input content (env DMAR_STATE; default $DMAR_CACHE/state)")
	fs.StringVar(&a.graph, "graph", env("DMAR_GRAPH", "embedded"), "graph backend: embedded, or neo4j://HOST:PORT (env DMAR_GRAPH)")
	fs.StringVar(&a.index, "index", env("DMAR_INDEX", "embedded"), "search backend: embedded, or weaviate://HOST:PORT/Class (env DMAR_INDEX)")
	fs.StringVar(&a.ort.LibPath, "ort-lib", a.ort.LibPath, "ONNX Runtime library (env DMAR_ORT_LIB)")
	fs.StringVar(&a.ort.Device, "device", a.ort.Device, "cpu or cuda (env DMAR_DEVICE)")
	fs.IntVar(&a.ort.IntraOpThreads, "threads", a.ort.IntraOpThreads, "ONNX Runtime intra-op threads, 0 = its choice (env DMAR_ORT_THREADS)")
	fs.StringVar(&a.encoderDir, "encoder-dir", onnx.DefaultEncoderDir(), "sentence encoder folder built by scripts/setup.sh (env DMAR_ENCODER_DIR)")
	fs.StringVar(&a.gnnPath, "gnn", env("DMAR_GNN", "models/gnn/gnn.onnx"), "Siamese GNN ONNX model; empty: the GED heuristic (env DMAR_GNN)")
	fs.StringVar(&a.gatePath, "gate", env("DMAR_GATE", "models/gate/gate.onnx"), "gate ONNX model; empty: fixed weights (env DMAR_GATE)")
	fs.IntVar(&a.docTokens, "doc-tokens", envInt("DMAR_DOC_TOKENS", 128), "documents are embedded from their first N word pieces at load time (the model allows 256; env DMAR_DOC_TOKENS)")
	fs.StringVar(&a.chatURL, "chat-url", os.Getenv("DMAR_CHAT_BASE_URL"), "OpenAI-compatible base URL for reformulator=chat, e.g. http://127.0.0.1:11434/v1 (env DMAR_CHAT_BASE_URL)")
	fs.StringVar(&a.chatModel, "chat-model", os.Getenv("DMAR_CHAT_MODEL"), "model name for reformulator=chat (env DMAR_CHAT_MODEL)")
	fs.DurationVar(&a.chatTO, "chat-timeout", 10*time.Second, "time limit of one chat reformulation")
	fs.BoolVar(&a.quiet, "quiet", false, "no progress output")
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
	cfg := pipeline.Config{Graph: g.graph, Index: x, Encoder: m.enc, GNN: m.gnn, Gate: m.gate, Metrics: metrics, Logger: log}
	if a.chatURL != "" {
		cfg.Chat = reformulate.Chat{BaseURL: a.chatURL, Model: a.chatModel, APIKey: os.Getenv("DMAR_CHAT_API_KEY"), Timeout: a.chatTO}
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
		cfg := neo4jkg.ConfigFromEnv() // user and password from the environment, never flags
		cfg.URI = a.graph
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
		key := g.key
		if key == "" {
			key = a.graph
		}
		x, err := a.loadIndex(ctx, g.graph, key, enc, a.progressOut(stderr))
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
		st, err := open(ctx, a.index)
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
