package server

import (
	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// This file is the one place where pipeline and kg values become the API's
// wire types. A result's documents, anchors and paths are the API's types
// already (pipeline/result.go); what is converted here keeps nil slices nil
// and empty ones empty, so the JSON is byte for byte what encoding the
// pipeline's values gives (a test holds it so).

// ToRetrieveResponse converts a retrieval's result.
func ToRetrieveResponse(r *pipeline.Result) *api.RetrieveResponse {
	if r == nil {
		return nil
	}
	return &api.RetrieveResponse{
		Query:             r.Query,
		Results:           r.Results,
		Anchors:           r.Anchors,
		QueryEntities:     r.QueryEntities,
		QuerySubgraphs:    convert(r.QuerySubgraphs, pipeline.APISubgraph),
		ReformulatedQuery: r.ReformulatedQuery,
		Reformulator:      r.Reformulator,
		Fallbacks:         r.Fallbacks,
		TimingsMS:         r.TimingsMS,
		Options:           ToOptions(r.Options),
		Neo4j:             r.Neo4j,
		Neo4jPaths:        r.Neo4jPaths,
		RetrievalID:       r.RetrievalID,
	}
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

// ToSubgraph converts an ego subgraph (pipeline.APISubgraph).
func ToSubgraph(g kg.Subgraph) api.Subgraph { return pipeline.APISubgraph(g) }

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
