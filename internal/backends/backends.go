// Package backends opens what a configuration (internal/config) names: the
// models, the graph and the search index, the document store over them,
// and the pipeline they make. It is the one switch per backend kind;
// cmd/dmar parses flags, calls it and hands the parts to the applications
// (server, eval, bench). Nothing else imports it but cmd/dmar.
package backends

import (
	"context"
	"io"
	"log/slog"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg"
	"github.com/dmar-kg/dmar/internal/mentions"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring/onnx"
	"github.com/dmar-kg/dmar/internal/state"
	"github.com/dmar-kg/dmar/internal/textgraph"
)

// Set is a configuration's models and backends, open.
type Set struct {
	Models *onnx.Models
	Graph  Graph
	Index  retrieval.Index
	// Mentions is the documents' mention index (Neo4j's MENTIONS edges, or
	// the embedded one in memory); nil for another graph.
	Mentions mentions.Index
	// TextGraph is the graph built from the corpus's text
	// (textgraph.extractor); nil without one.
	TextGraph textgraph.Store
	// textLive keeps the embedded text graph exact under the document
	// store's writes (nil with Neo4j's, or none).
	textLive *textgraph.Live
	// Ready are the backends' readiness checks (GET /readyz).
	Ready []Check
	cfg   config.Config
}

// CorpusFiles are the corpus files the set was opened with.
func (s *Set) CorpusFiles() []string { return s.cfg.CorpusFiles() }

// Graph is the opened graph backend.
type Graph struct {
	kg.Graph
	Neo4j *neo4jkg.Store // set when the graph is Neo4j
	Key   string         // fingerprint of the loaded bundle (embedded)
}

// Check is a backend's readiness check.
type Check struct {
	Name string
	Ping func(context.Context) error
}

// Open opens the models, the graph and the index that cfg names; progress
// goes to out (unless cfg.Quiet). On an error nothing stays open.
func Open(ctx context.Context, cfg config.Config, out io.Writer, log *slog.Logger) (*Set, error) {
	return open(ctx, cfg, out, log, false)
}

// OpenLoaded is Open that first loads the corpus into a remote index (as
// dmar load corpus does), creating its collection when missing.
func OpenLoaded(ctx context.Context, cfg config.Config, out io.Writer, log *slog.Logger) (*Set, error) {
	return open(ctx, cfg, out, log, true)
}

func open(ctx context.Context, cfg config.Config, out io.Writer, log *slog.Logger, load bool) (*Set, error) {
	m, err := OpenModels(cfg, log)
	if err != nil {
		return nil, err
	}
	g, checks, err := OpenGraph(ctx, cfg, out)
	if err != nil {
		m.Close()
		return nil, err
	}
	x, more, err := OpenIndex(ctx, cfg, g, m.DocEncoder, out, load)
	if err != nil {
		m.Close()
		return nil, err
	}
	mx, err := openMentions(ctx, cfg, g, x, m.DocEncoder, out)
	if err != nil {
		m.Close()
		return nil, err
	}
	set := &Set{Models: m, Graph: g, Index: x, Mentions: mx, Ready: append(checks, more...), cfg: cfg}
	tg, live, err := openTextGraph(ctx, cfg, g, x, m.DocEncoder, out)
	if err != nil {
		m.Close()
		return nil, err
	}
	set.TextGraph, set.textLive = tg, live
	return set, nil
}

// Embedded is a set over the same models with the embedded graph and index
// of the configured data: a remote deployment's twin, so that dmar bench
// latency times both in one process. It shares the receiver's models: close
// the receiver only.
func (s *Set) Embedded(ctx context.Context, out io.Writer) (*Set, error) {
	cfg := s.cfg
	cfg.Graph, cfg.Index = "", ""
	g, checks, err := OpenGraph(ctx, cfg, out)
	if err != nil {
		return nil, err
	}
	x, more, err := OpenIndex(ctx, cfg, g, s.Models.DocEncoder, out, false)
	if err != nil {
		return nil, err
	}
	return &Set{Models: s.Models, Graph: g, Index: x, Ready: append(checks, more...), cfg: cfg}, nil
}

// Close frees the models and the index's connection, if it holds one.
func (s *Set) Close() {
	if s.textLive != nil {
		s.textLive.Close()
	}
	s.Models.Close()
	if c, ok := s.Index.(io.Closer); ok {
		c.Close()
	}
}

// Progress is out, or nil when the configuration asks for quiet.
func Progress(cfg config.Config, out io.Writer) io.Writer {
	if cfg.Quiet {
		return nil
	}
	return out
}

// Inputs are the embedded backend's inputs and snapshots.
func Inputs(cfg config.Config, out io.Writer) state.Inputs {
	files := cfg.CorpusFiles()
	return state.Inputs{Bundle: cfg.BundleDir(), Corpus: files[0], Extra: files[1:], Dir: cfg.State, Log: Progress(cfg, out),
		CompactVectors: cfg.Embedded.CompactVectors, VectorDir: cfg.Embedded.VectorDir}
}

// Neo4j is the Neo4j driver's configuration; the password comes from the
// environment or a file, never flags.
func Neo4j(cfg config.Config) neo4jkg.Config {
	n := cfg.Neo4j
	return neo4jkg.Config{URI: cfg.Graph, User: n.User, Password: n.Password.Reveal(), Database: n.Database}
}

// OpenModels opens the encoder, GNN, gates and relation models.
func OpenModels(cfg config.Config, log *slog.Logger) (*onnx.Models, error) {
	mc := cfg.Models
	return onnx.OpenModels(onnx.ModelsConfig{Runtime: ORT(cfg.ORT),
		Encoder: mc.Encoder, EncoderDir: mc.EncoderFolder(), EncoderBatch: mc.EncoderBatch, DocTokens: mc.DocTokens, RelationEncoder: mc.RelationEncoder, RelationEncoderDir: mc.RelationEncoderFolder(), RelProjection: mc.RelProjection, GNN: mc.GNN, Gate: mc.Gate, RelPrior: mc.RelPrior, EvidenceGate: mc.EvidenceGate, Ranker: mc.Ranker}, log)
}

// ORT is the ONNX Runtime's configuration.
func ORT(o config.ORT) onnx.Config {
	return onnx.Config{LibPath: o.Lib, Device: o.Device, IntraOpThreads: o.Threads, CUDADeviceID: o.CUDADevice, CUDATF32: o.CUDATF32, Spin: o.Spin}
}
