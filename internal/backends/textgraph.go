package backends

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
	"github.com/dmar-kg/dmar/internal/state"
	"github.com/dmar-kg/dmar/internal/textgraph"
)

// Extractor is the phrase extractor the configuration names and the key
// its output is snapshotted under (its name and what decides its output);
// nil without one. The caller closes a spaCy extractor (Close).
func Extractor(cfg config.Config) (textgraph.Extractor, string, error) {
	e := cfg.TextGraph.Extractor
	switch {
	case e == "":
		return nil, "", nil
	case e == "heuristic":
		return textgraph.Heuristic{}, "heuristic-" + textgraph.HeuristicVersion, nil
	case e == "spacy":
		return &textgraph.Spacy{Python: cfg.TextGraph.Python, Processes: spacyProcesses()}, "spacy-" + textgraph.SpacyVersion(), nil
	case strings.HasPrefix(e, "openie:"):
		path := strings.TrimPrefix(e, "openie:")
		o, err := textgraph.ReadOpenIE(path)
		if err != nil {
			return nil, "", err
		}
		key, err := state.Fingerprint([]string{path})
		if err != nil {
			return nil, "", err
		}
		return o, "openie-" + key, nil
	}
	return nil, "", fmt.Errorf("textgraph.extractor %q: want heuristic, spacy or openie:FILE", e)
}

// openTextGraph is the text graph the configuration asks for (nil without
// an extractor): Neo4j's, which dmar load corpus wrote (LoadTextGraph), or
// the embedded one, built in memory (buildTextGraph) or read from its
// snapshot; with the writer that keeps it exact under the document store's
// writes (its extractor's process, if any, started by the first write).
// Live writes extract, link and embed as the load did: with the graph the
// corpus was linked with (linkerOf).
func openTextGraph(ctx context.Context, cfg config.Config, g Graph, x retrieval.Index, enc scoring.Encoder, out io.Writer) (textgraph.Store, *textgraph.Live, error) {
	if cfg.TextGraph.Extractor == "" {
		return nil, nil, nil
	}
	if g.Neo4j != nil {
		ex, _, err := Extractor(cfg)
		if err != nil {
			return nil, nil, err
		}
		linker, _ := linkerOf(ctx, cfg, g, out)
		tg := g.Neo4j.TextGraph()
		return tg, &textgraph.Live{Store: tg, Builder: textgraph.Builder{Extractor: ex, Linker: linker, KG: linker, Encoder: enc}}, nil
	}
	m, b, err := buildTextGraph(ctx, cfg, g, x, enc, out)
	if err != nil {
		return nil, nil, err
	}
	return m, &textgraph.Live{Store: m, Builder: b}, nil
}

// LoadTextGraph builds the configured text graph (none without an
// extractor) and, when the graph is Neo4j, writes it there in place of the
// one it holds: dmar load corpus's last step.
func LoadTextGraph(ctx context.Context, cfg config.Config, g Graph, x retrieval.Index, enc scoring.Encoder, out io.Writer) error {
	if cfg.TextGraph.Extractor == "" {
		return nil
	}
	m, _, err := buildTextGraph(ctx, cfg, g, x, enc, out)
	if err != nil || g.Neo4j == nil {
		return err
	}
	if err := g.Neo4j.TextGraph().Replace(ctx, m); err != nil {
		return fmt.Errorf("write the text graph to neo4j: %w", err)
	}
	fmt.Fprintf(out, "load corpus: text graph written to neo4j: %s\n", m.Stats())
	return nil
}

// buildTextGraph is the text graph built in memory over the embedded graph
// from the corpus's documents (x's, or the embedded index snapshot's when x
// is remote), with the embedded graph linking phrases and giving the KG's
// edges; from its snapshot when its inputs are unchanged; and the builder
// it was built with. The extractor's process is stopped when it returns; a
// later write through the builder starts it again.
func buildTextGraph(ctx context.Context, cfg config.Config, g Graph, x retrieval.Index, enc scoring.Encoder, out io.Writer) (*textgraph.Memory, textgraph.Builder, error) {
	ex, key, err := Extractor(cfg)
	if err != nil || ex == nil {
		return nil, textgraph.Builder{}, err
	}
	if c, ok := ex.(io.Closer); ok {
		defer c.Close()
	}
	linker, kgKey := linkerOf(ctx, cfg, g, out)
	mg, ok := linker.(*memkg.Graph)
	if !ok {
		return nil, textgraph.Builder{}, fmt.Errorf("the text graph is built with the embedded graph: configure the KG bundle (data or kg) beside %s", cfg.Graph)
	}
	docs, err := corpusDocs(ctx, cfg, g, x, enc, out)
	if err != nil {
		return nil, textgraph.Builder{}, err
	}
	b := textgraph.Builder{Extractor: ex, Linker: mg, KG: mg, Encoder: enc}
	m, err := Inputs(cfg, out).TextGraph(ctx, &b, kgKey, key, docs)
	return m, b, err
}

// spacyProcesses is how many spaCy processes a build may run: one per core,
// at most 4 (each holds about 215 MB; a small write uses one).
func spacyProcesses() int {
	return min(runtime.NumCPU(), 4)
}
