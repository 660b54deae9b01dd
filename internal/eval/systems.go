package eval

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/pipeline"
)

// System is one retrieval configuration compared in a run.
type System struct {
	Name string `json:"name"`
	// Kind is bm25, dense, hybrid (one search), kg-walk (the pipeline's
	// graph channel alone) or dmar (the pipeline).
	Kind  string  `json:"kind"`
	Alpha float64 `json:"alpha,omitempty"` // hybrid: weight of the vector side
	// Options are the pipeline options (dmar systems).
	Options *pipeline.Options `json:"options,omitempty"`
	// PathPrior composes the pipeline with the learned relation prior at
	// this weight (pipeline.Pipeline.WithPathPrior; the -pX variants); 0:
	// the pipeline as it is.
	PathPrior float64 `json:"path_prior,omitempty"`
	Ablates   string  `json:"ablates,omitempty"` // what the ablation changes, for the report
	// From is the system an ablation starts from (dmar or dmar-full); the
	// run compares the two, paired, when both ran (diffs_vs_from).
	From string `json:"from,omitempty"`
	// Compared says the system is not among the baselines the best is
	// chosen from (--baselines names others), though it is not DMAR.
	Compared bool `json:"compared,omitempty"`
}

// Baseline reports whether s is one of the baselines DMAR is compared against.
func (s System) Baseline() bool { return s.Kind != "dmar" && !s.Compared }

// RestrictBaselines keeps only the named systems among the baselines the
// best is chosen from; the other baselines are compared like DMAR's
// systems. Empty keeps them all; a name that is no baseline of the run is
// an error.
func RestrictBaselines(systems []System, names string) error {
	if names == "" {
		return nil
	}
	keep := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		keep[strings.TrimSpace(n)] = true
	}
	found := 0
	for i := range systems {
		if !systems[i].Baseline() {
			continue
		}
		if keep[systems[i].Name] {
			found++
		} else {
			systems[i].Compared = true
		}
	}
	if found != len(keep) {
		return fmt.Errorf("--baselines %q: each must be a baseline system of the run (bm25, dense, hybrid, kg-walk, ppr) listed in --systems", names)
	}
	return nil
}

// SystemNames are the systems a run runs by default, in report order.
// dmar is the question-aware method (pipeline.Options.QuestionAware) and the
// channel's ablations start from it; dmar-full is dmar with the paper's
// stages on (structural score, anchors, reformulation, second search), and
// the ablations of those stages start from it; dmar-paper is DMAR-SPEC.md's
// method.
var SystemNames = []string{"bm25", "dense", "hybrid", "kg-walk", "dmar-paper", "dmar", "dmar-full", "dmar-no-graph-recall", "dmar-no-path-relevance", "dmar-no-link-filter", "dmar-unmasked", "dmar-no-own-pages", "dmar-fixed-gate", "dmar-no-reform", "dmar-no-second-stage", "dmar-no-kg", "dmar-m1", "dmar-ged", "dmar-mc50"}

// GraphSystemNames are the graph channel's sweep systems (beyond the
// paper), run only when named: dmar-graph (the first channel setting: one
// hop, linked roots only, graph_boost 10) and the sweep variants of it and
// of kg-walk (graphVariant).
var GraphSystemNames = []string{"dmar-graph"}

// GateSystemNames are the evidence-aware gate's systems (beyond the paper),
// run only when named: dmar with gate=evidence (models/evgate).
var GateSystemNames = []string{"dmar-evidence-gate"}

// The graph channel's setting for kg-walk and dmar-graph, chosen on kgqa dev
// (docs/method.md, "Beyond the paper: graph recall").
const (
	graphHops      = 1
	graphWeight    = 0.3
	graphBoost     = 10.0
	graphRelations = "plain"
)

func withGraph(o pipeline.Options) pipeline.Options {
	o.GraphRecall, o.GraphWeight, o.GraphBoost, o.GraphRelations = graphHops, graphWeight, graphBoost, graphRelations
	return o
}

// graphVariant parses a sweep variant of kg-walk or dmar-graph: the name,
// then any of -hN (graph_recall), -kN (graph_recall_k), -wX (graph_weight),
// -bX (graph_boost), -rN (graph_roots), -pX (path_prior), -dir (directed
// relation texts), -hyb (hybrid stage 1, and so hybrid graph_roots), e.g.
// dmar-graph-h2-b3.
// The options are validated with the system's.
func graphVariant(name string, o pipeline.Options) (kind string, out pipeline.Options, prior float64, ok bool) {
	for _, k := range []string{"kg-walk", "dmar-graph"} {
		rest, found := strings.CutPrefix(name, k+"-")
		if !found {
			continue
		}
		o = withGraph(o)
		for _, t := range strings.Split(rest, "-") {
			var err error
			switch {
			case t == "dir":
				o.GraphRelations = "directed"
			case t == "hyb":
				o.Stage1 = "hybrid"
			case len(t) > 1 && t[0] == 'h':
				o.GraphRecall, err = strconv.Atoi(t[1:])
			case len(t) > 1 && t[0] == 'k':
				o.GraphRecallK, err = strconv.Atoi(t[1:])
			case len(t) > 1 && t[0] == 'w':
				o.GraphWeight, err = strconv.ParseFloat(t[1:], 64)
			case len(t) > 1 && t[0] == 'b':
				o.GraphBoost, err = strconv.ParseFloat(t[1:], 64)
			case len(t) > 1 && t[0] == 'r':
				o.GraphRoots, err = strconv.Atoi(t[1:])
			case len(t) > 1 && t[0] == 'p':
				prior, err = strconv.ParseFloat(t[1:], 64)
			default:
				return "", o, 0, false
			}
			if err != nil {
				return "", o, 0, false
			}
		}
		if k == "dmar-graph" {
			k = "dmar"
		}
		return k, o, prior, true
	}
	return "", o, 0, false
}

// Systems builds the named systems. base is the paper's configuration
// (dmar-paper); dmar and its ablations start from base.QuestionAware(). A
// Linking set in base (eval --linking) overrides every system's but
// dmar-no-link-filter's. K is raised to kmax (and P with it) so that every
// system returns kmax documents.
func Systems(names []string, base pipeline.Options, kmax int, alpha float64) ([]System, error) {
	base.K = kmax
	base.P = max(base.P, kmax)
	linking := base.Linking
	paper := base
	base = base.QuestionAware()
	full := base.WithPaperStages()
	var out []System
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		s, o, err := named(n, paper, base, full, alpha)
		if err != nil {
			return nil, err
		}
		if linking != "" && n != "dmar-no-link-filter" {
			o.Linking = linking
		}
		if s.Kind == "dmar" || s.Kind == "kg-walk" || s.Kind == "ppr" {
			if err := o.Validate(); err != nil {
				return nil, fmt.Errorf("system %s: %w", n, err)
			}
			s.Options = &o
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no systems given (known: %s)", strings.Join(SystemNames, ", "))
	}
	return out, nil
}

// named is the system n before eval --linking: its kind, options and what
// it ablates. paper is dmar-paper's options, base dmar's and full
// dmar-full's (dmar with the paper's stages).
func named(n string, paper, base, full pipeline.Options, alpha float64) (System, pipeline.Options, error) {
	o := base
	s := System{Name: n, Kind: "dmar"}
	switch n {
	case "bm25", "dense":
		s.Kind = n
	case "hybrid":
		s.Kind, s.Alpha = n, alpha
	case "dmar":
	case "dmar-full":
		o, s.Ablates = full, "dmar with the paper's stages on: the structural score (GNN, Shapley values, gate), three anchors, the reformulation and the second search"
	case "dmar-unmasked":
		s.From = "dmar"
		o.GraphRelationQuery, s.Ablates = "question", "the graph channel's relation cosines read enc(Q), not Q without its linked mentions"
	case "dmar-no-own-pages":
		s.From = "dmar"
		o.NoOwnPages, s.Ablates = true, "the final pool without the query entities' pages that neither search nor the channel found"
	case "dmar-no-second-stage":
		o, s.From = full, "dmar-full"
		o.M, s.Ablates = 0, "dmar-full without anchors, reformulation and second search (the structural score kept)"
	case "dmar-paper":
		o, s.Ablates = paper, "the paper's method (DMAR-SPEC.md; a request's method paper)"
	case "kg-walk":
		s.Kind = n
		s.Ablates = fmt.Sprintf("graph channel alone: documents of the entities %d hop(s) from Q's linked entities and the top %d stage-1 document(s)' entities, ranked by path relevance + %.2f x cos(Q, D); no root ranks nothing", o.GraphRecall, o.GraphRoots, o.GraphWeight)
	case "dmar-no-graph-recall":
		s.From = "dmar"
		o.GraphRecall, s.Ablates = 0, "no graph channel (BM25 recall only, as the paper)"
	case "dmar-no-path-relevance":
		s.From = "dmar"
		o.GraphRelations, s.Ablates = "none", "graph channel ranked by cos(Q, D) alone, not by the relations' question relevance"
	case "dmar-no-link-filter":
		s.From = "dmar"
		o.Linking, s.Ablates = "exact", "exact linking (the paper's), no context linker"
	case "dmar-graph":
		o = withGraph(paper)
		s.Ablates = fmt.Sprintf("dmar with graph recall: %d hop(s), %d documents into both searches, graph_weight %.2f, graph_boost %.2f, %s relation texts", o.GraphRecall, o.GraphRecallK, o.GraphWeight, o.GraphBoost, o.GraphRelations)
	case "dmar-chat":
		o, s.From = full, "dmar-full"
		o.Reformulator, s.Ablates = "chat", "generative reformulation (paper phase 3) by the chat endpoint (--chat-url, --chat-model); the built-in reformulator where it fails"
	case "dmar-no-reform":
		o, s.From = full, "dmar-full"
		o.Reformulator, s.Ablates = "none", "no reformulation (stage 2 searches with Q)"
	case "dmar-no-kg":
		o, s.From = full, "dmar-full"
		o.Structure, s.Ablates = "off", "dmar-full without the KG path's structural score (anchors by the semantic score)"
	case "dmar-structure-always":
		o, s.From = full, "dmar-full"
		o.StructureNeedsChannel, s.Ablates = false, "the structural score also where the graph channel reached no document"
	case "dmar-m1":
		o, s.From = full, "dmar-full"
		o.M, s.Ablates = 1, "single anchor (m=1)"
	case "dmar-fixed-gate":
		o, s.From = full, "dmar-full"
		o.Gate, s.Ablates = "fixed", fmt.Sprintf("fixed fusion weights %.2f/%.2f instead of the gate", o.FixedAlpha, 1-o.FixedAlpha)
	case "dmar-evidence-gate":
		o, s.From = full, "dmar-full"
		o.Gate, s.Ablates = "evidence", "evidence-aware gate (models/evgate: link confidence, path relevance, hubs, z-scores) instead of the paper's gate"
	case "dmar-ged":
		o, s.From = full, "dmar-full"
		o.Structure, s.Ablates = "ged", "graph-edit-distance heuristic instead of the GNN"
	case "dmar-mc50":
		o, s.From = full, "dmar-full"
		o.Shapley, o.Samples, s.Ablates = "montecarlo", 50, "Monte Carlo Shapley, T=50, instead of exact"
	default:
		if fo, what, ok := kgRankVariant(n, base); ok {
			s.From, s.Ablates = "dmar", what // compared, paired, with the ranker's order alone
			return s, fo, nil
		}
		kind, vo, what, prior, err := variant(n, paper, base)
		if err != nil {
			return s, o, err
		}
		if !(prior >= 0 && prior <= pipeline.MaxPathPrior) {
			return s, o, fmt.Errorf("system %s: path_prior must be between 0 and %v, got %v", n, pipeline.MaxPathPrior, prior)
		}
		s.Kind, o, s.Ablates, s.PathPrior = kind, vo, what, prior
	}
	return s, o, nil
}

// variant is a variant system named n (beyond the default systems): its
// kind, options, what it changes and the relation prior's weight it is
// composed with (0: none). paper and questionAware are the options
// dmar-paper's and dmar's variants start from.
func variant(n string, paper, questionAware pipeline.Options) (kind string, o pipeline.Options, what string, prior float64, err error) {
	if so, what, ok := stage2VectorVariant(n, questionAware); ok {
		return "dmar", so, what, 0, nil
	}
	if kind, po, what, ok := popVariant(n, questionAware); ok {
		return kind, po, what, 0, nil
	}
	if kind, mo, what, ok := mentionsVariant(n, questionAware); ok {
		return kind, mo, what, 0, nil
	}
	if lo, what, ok := linksVariant(n, questionAware); ok {
		return "dmar", lo, what, 0, nil
	}
	if kind, to, what, ok := textVariant(n, questionAware); ok {
		return kind, to, what, 0, nil
	}
	if kind, ro, what, ok := rankingVariant(n, questionAware); ok {
		return kind, ro, what, 0, nil
	}
	kind, vo, prior, ok := graphVariant(n, paper)
	if !ok {
		return "", o, "", 0, fmt.Errorf("unknown system %q (known: %s, %s, %s, dmar-chat, dmar-structure-always, dmar-popX and kg-walk-popX, the ranking variants dmar-... and kg-walk-... with mask, dir, wX (dmar-mask-dir), the variants kg-walk-... and dmar-graph-... with -hN -kN -wX -bX -rN -pX -dir -hyb)", n, strings.Join(SystemNames, ", "), strings.Join(GraphSystemNames, ", "), strings.Join(GateSystemNames, ", "))
	}
	return kind, vo, fmt.Sprintf("graph variant: graph_recall %d, graph_recall_k %d, graph_weight %.2f, graph_boost %.2f, %s relation texts", vo.GraphRecall, vo.GraphRecallK, vo.GraphWeight, vo.GraphBoost, vo.GraphRelations), prior, nil
}
