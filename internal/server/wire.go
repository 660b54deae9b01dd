package server

import (
	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring/pathrel"
)

// This file is the one place where pipeline and kg values become the API's
// wire types. Every conversion keeps nil slices nil and empty ones empty, so
// the JSON is byte for byte what encoding the pipeline's values gives (a
// test holds it so).

// ToRetrieveResponse converts a retrieval's result.
func ToRetrieveResponse(r *pipeline.Result) *api.RetrieveResponse {
	if r == nil {
		return nil
	}
	out := &api.RetrieveResponse{
		Query:             r.Query,
		Results:           convert(r.Results, toDoc),
		Anchors:           convert(r.Anchors, toAnchor),
		QueryEntities:     convert(r.QueryEntities, toQueryEntity),
		QuerySubgraphs:    convert(r.QuerySubgraphs, ToSubgraph),
		ReformulatedQuery: r.ReformulatedQuery,
		Reformulator:      r.Reformulator,
		Fallbacks:         convert(r.Fallbacks, func(f pipeline.Fallback) api.Fallback { return api.Fallback{Name: f.Name, Reason: f.Reason} }),
		TimingsMS:         r.TimingsMS,
		Options:           ToOptions(r.Options),
		RetrievalID:       r.RetrievalID,
	}
	out.Neo4j, out.Neo4jPaths = toStatement(r.Neo4j), toStatement(r.Neo4jPaths)
	return out
}

func toStatement(s *pipeline.Statement) *api.Statement {
	if s == nil {
		return nil
	}
	return &api.Statement{Cypher: s.Cypher, Params: s.Params}
}

// ToOptions converts the options a retrieval ran with.
func ToOptions(o pipeline.Options) api.Options {
	return api.Options{
		Method: o.Method,
		N:      o.N, M: o.M, P: o.P, K: o.K,
		Hops: o.Hops, MaxNodes: o.MaxNodes, HubDegree: o.HubDegree,
		Lambda: o.Lambda, Shapley: o.Shapley, Samples: o.Samples, Seed: o.Seed,
		Stage1: o.Stage1, Stage1Alpha: o.Stage1Alpha, Stage2: o.Stage2, Stage2Alpha: o.Stage2Alpha, Stage2Vector: o.Stage2Vector, Fusion: string(o.Fusion),
		Reformulator: o.Reformulator, Gate: o.Gate, FixedAlpha: o.FixedAlpha, Structure: o.Structure, Linking: o.Linking,
		SnippetChars: o.SnippetChars, MaxAnchorSubgraphs: o.MaxAnchorSubgraphs,
		Filter:      api.Filter{IDs: o.Filter.IDs, AnyEntities: o.Filter.AnyEntities},
		Persist:     o.Persist,
		GraphRecall: o.GraphRecall, GraphRecallK: o.GraphRecallK, GraphWeight: o.GraphWeight, GraphBoost: o.GraphBoost, GraphRelations: o.GraphRelations,
		GraphRoots: o.GraphRoots, GraphPopularity: o.GraphPopularity, GraphMentions: o.GraphMentions, TextGraph: o.TextGraph, TextGraphK: o.TextGraphK, TitleLinks: o.TitleLinks, GraphRelationQuery: o.GraphRelationQuery, StructureNeedsChannel: o.StructureNeedsChannel,
		FinalRank: o.FinalRank,
	}
}

func toDoc(d pipeline.Doc) api.Doc {
	b := d.Breakdown
	return api.Doc{ID: d.ID, Title: d.Title, Text: d.Text, Rank: d.Rank, Score: d.Score, Entities: d.Entities,
		Breakdown: api.Breakdown{Semantic: b.Semantic, Structural: b.Structural, ZSemantic: b.ZSemantic, ZStructural: b.ZStructural,
			Gate: api.Weights{Semantic: b.Gate.Semantic, Structural: b.Gate.Structural}, Stage: b.Stage, SearchScore: b.SearchScore,
			Explain: b.Explain, InFirst: b.InFirst, Anchor: b.Anchor, Source: b.Source, Graph: toGraphPath(b.Graph), Text: toTextHit(b.Text),
			Paths: convert(b.Paths, toNamedPath), Rank: toRank(b.Rank)}}
}

func toRank(r *pipeline.RankBreakdown) *api.RankBreakdown {
	if r == nil {
		return nil
	}
	return &api.RankBreakdown{Score: r.Score, RankerScore: r.Ranker, Stage1Rank: r.Stage1Rank, Stage2Rank: r.Stage2Rank, GraphRank: r.GraphRank, TextRank: r.TextRank, Own: r.Own, NamedBy: r.NamedBy}
}

func toTextHit(t *pipeline.TextHit) *api.TextHit {
	if t == nil {
		return nil
	}
	return &api.TextHit{Score: t.Score, Norm: t.Norm, Rank: t.Rank, Seed: t.Seed, Path: t.Path, Hops: t.Hops}
}

func toGraphPath(g *pipeline.GraphPath) *api.GraphPath {
	if g == nil {
		return nil
	}
	out := &api.GraphPath{Path: g.Path, Relevance: g.Relevance, Score: g.Score, Popularity: g.Popularity, Steps: convert(g.Steps, toGraphStep)}
	if b := g.Bridge; b != nil {
		out.Bridge = &api.GraphBridge{Entity: b.Entity, Place: b.Place, IDF: b.IDF, Weight: b.Weight, PathRelevance: b.PathRelevance}
	}
	return out
}

func toNamedPath(p pipeline.NamedPath) api.NamedPath {
	return api.NamedPath{From: p.From, FromLabel: p.FromLabel, FromKind: p.FromKind, To: p.To, ToLabel: p.ToLabel,
		Path: p.Path, Text: p.Text, Steps: convert(p.Steps, toGraphStep), Relevance: p.Relevance}
}

func toGraphStep(s pathrel.Step) api.GraphStep {
	return api.GraphStep{From: s.From, PID: s.PID, Label: s.Label, To: s.To, Backward: s.Backward, Relevance: s.Relevance}
}

func toAnchor(a pipeline.Anchor) api.Anchor {
	return api.Anchor{Doc: toDoc(a.Doc), Snippet: a.Snippet, PhiExact: a.PhiExact, Subgraphs: convert(a.Subgraphs, ToSubgraph),
		Phi: convert(a.Phi, func(p pipeline.Phi) api.Phi { return api.Phi{QID: p.QID, Label: p.Label, Phi: p.Phi} })}
}

func toQueryEntity(e pipeline.QueryEntity) api.QueryEntity {
	return api.QueryEntity{QID: e.QID, Label: e.Label, Surface: e.Surface, Start: e.Start, End: e.End, Confidence: e.Confidence}
}

// ToSubgraph converts an ego subgraph.
// Nodes and edges are arrays, never null: a subgraph of one node has no
// edges, and the OpenAPI document promises an array.
func ToSubgraph(g kg.Subgraph) api.Subgraph {
	return api.Subgraph{Root: g.Root, Truncated: g.Truncated,
		Nodes: convert(orEmpty(g.Nodes), func(n kg.Node) api.Node { return api.Node{QID: n.QID, Label: n.Label, Hop: n.Hop, Hub: n.Hub} }),
		Edges: convert(orEmpty(g.Edges), func(e kg.Edge) api.Edge { return api.Edge{From: e.From, To: e.To, PID: e.PID, Label: e.Label} })}
}

func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// toErrorBody converts a client-visible error.
func toErrorBody(e *errs.Error) api.ErrorBody {
	return api.ErrorBody{Error: api.ErrorDetail{Code: string(e.Code), Message: e.Message, Field: e.Field}}
}

// convert maps f over xs, keeping nil nil and empty empty.
func convert[T, U any](xs []T, f func(T) U) []U {
	if xs == nil {
		return nil
	}
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}
