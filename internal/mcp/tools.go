package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dmar-kg/dmar/internal/api"
)

// RetrieveInput is the retrieve tool's input.
type RetrieveInput struct {
	Query       string   `json:"query" jsonschema:"the question or search text in natural language, e.g. Which films did Christopher Nolan direct?"`
	K           *int     `json:"k,omitempty" jsonschema:"how many documents to return, best first (the server's default when left out: 5)"`
	Method      *string  `json:"method,omitempty" jsonschema:"dmar (question-aware, the default) or paper (the published method); leave it out unless asked"`
	AnyEntities []string `json:"any_entities,omitempty" jsonschema:"only documents that mention at least one of these Wikidata QIDs (from link or from earlier results)"`
	IDs         []string `json:"ids,omitempty" jsonschema:"only documents with these ids"`
}

// RetrieveOutput is the retrieve tool's output: the ranked documents with
// why each was found.
type RetrieveOutput struct {
	Query             string         `json:"query"`
	ReformulatedQuery string         `json:"reformulated_query,omitempty" jsonschema:"the question widened with knowledge-graph context, as searched"`
	QueryEntities     []Entity       `json:"query_entities" jsonschema:"the entities linked in the question"`
	Results           []Result       `json:"results" jsonschema:"the documents, best first"`
	Fallbacks         []api.Fallback `json:"fallbacks,omitempty" jsonschema:"degradations that fired, and why"`
}

// Entity is a knowledge-graph entity linked in a text.
type Entity struct {
	QID     string `json:"qid"`
	Label   string `json:"label"`
	Surface string `json:"surface,omitempty" jsonschema:"the words of the text it was linked from"`
}

// Result is one retrieved document.
type Result struct {
	Rank     int      `json:"rank"`
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Text     string   `json:"text"`
	Score    float64  `json:"score" jsonschema:"the fused score the ranking is by"`
	Entities []string `json:"entities" jsonschema:"QIDs of the entities the document mentions"`
	Paths    []Path   `json:"paths" jsonschema:"knowledge-graph paths from the question's entities to the document's, best first: why the graph supports it"`
	// Breakdown is the rest of the server's score breakdown, as it sends it.
	Breakdown map[string]any `json:"breakdown" jsonschema:"the score's parts as the server reports them (semantic, structural, gate weights, stage, source)"`
}

// Path is a knowledge-graph path from a question entity to a document entity.
type Path struct {
	Text      string  `json:"text" jsonschema:"the path with labels, e.g. Christopher Nolan -[director of]-> Inception"`
	Path      string  `json:"path" jsonschema:"the same with QIDs and property ids"`
	From      string  `json:"from"`
	To        string  `json:"to"`
	Relevance float64 `json:"relevance" jsonschema:"how well the path's relations match the question"`
}

// LinkInput is the link tool's input.
type LinkInput struct {
	Text string `json:"text" jsonschema:"the text to find knowledge-graph entities in"`
}

// LinkOutput lists the entities linked in the text.
type LinkOutput struct {
	Mentions []api.QueryEntity `json:"mentions"`
}

// SubgraphInput is the subgraph tool's input.
type SubgraphInput struct {
	QID       string `json:"qid" jsonschema:"the entity's Wikidata id, Q followed by digits (from link or retrieve)"`
	Hops      *int   `json:"hops,omitempty" jsonschema:"how many edges away from the entity to go (default 1)"`
	Limit     *int   `json:"limit,omitempty" jsonschema:"the most nodes to return (default 64)"`
	HubDegree *int   `json:"hub_degree,omitempty" jsonschema:"entities with more edges than this are kept but not expanded (default 500)"`
}

// SubgraphOutput is the entity's neighbourhood.
type SubgraphOutput struct {
	Root      string     `json:"root"`
	Nodes     []api.Node `json:"nodes"`
	Edges     []api.Edge `json:"edges"`
	Truncated bool       `json:"truncated,omitempty" jsonschema:"the node cap dropped reachable nodes"`
}

// DocumentInput names one stored document.
type DocumentInput struct {
	ID string `json:"id" jsonschema:"the document id, as retrieve returns it"`
}

// Document is a stored document with the entities it mentions.
type Document struct {
	ID       string             `json:"id"`
	Title    string             `json:"title"`
	Text     string             `json:"text"`
	Metadata map[string]any     `json:"metadata,omitempty"`
	Entities []api.LinkedEntity `json:"entities"`
}

// PutInput is the put_documents tool's input.
type PutInput struct {
	Documents []PutDocument `json:"documents" jsonschema:"the documents to add or replace (by id)"`
}

// PutDocument is one document to store.
type PutDocument struct {
	ID       string         `json:"id" jsonschema:"a stable id: a document with the same id is replaced"`
	Title    string         `json:"title,omitempty"`
	Text     string         `json:"text,omitempty" jsonschema:"the document's text (a document needs a title or a text)"`
	Metadata map[string]any `json:"metadata,omitempty" jsonschema:"any JSON object kept with the document"`
}

// DeleteInput is the delete_documents tool's input.
type DeleteInput struct {
	IDs []string `json:"ids" jsonschema:"the ids of the documents to delete; if one is unknown nothing is deleted"`
}

// AnswerInput is the answer tool's input.
type AnswerInput struct {
	Query  string  `json:"query" jsonschema:"the question to answer"`
	K      *int    `json:"k,omitempty" jsonschema:"how many documents to retrieve (the answer reads the top 3)"`
	Method *string `json:"method,omitempty" jsonschema:"dmar (the default) or paper"`
}

// AnswerOutput is a short answer citing the documents it was written from.
type AnswerOutput struct {
	Answer           string   `json:"answer"`
	Citations        []string `json:"citations" jsonschema:"ids of the documents the answer cites"`
	DroppedCitations []string `json:"dropped_citations,omitempty" jsonschema:"ids the generator cited without having read them, removed from the answer"`
	Sources          []string `json:"sources" jsonschema:"ids of the documents the generator read"`
	Model            string   `json:"model"`
	Results          []Result `json:"results" jsonschema:"the retrieval the answer was written from"`
}

// openAPI is the part of the OpenAPI document the tools read.
type openAPI struct {
	Paths map[string]map[string]struct {
		Parameters []struct {
			Name   string
			Schema map[string]any
		}
	} `json:"paths"`
	Components struct {
		Schemas map[string]struct {
			Properties map[string]map[string]any `json:"properties"`
		} `json:"schemas"`
	} `json:"components"`
}

func (o openAPI) property(schema, name string) map[string]any {
	return o.Components.Schemas[schema].Properties[name]
}

func (o openAPI) parameter(path, method, name string) map[string]any {
	for _, p := range o.Paths[path][method].Parameters {
		if p.Name == name {
			return p.Schema
		}
	}
	return nil
}

// bound copies the bounds of an OpenAPI property (numbers, lengths, item
// counts, enums) onto a tool's input property.
func bound(dst *jsonschema.Schema, src map[string]any) error {
	if src == nil {
		return fmt.Errorf("no such property in the OpenAPI document")
	}
	num := func(k string) *float64 {
		if v, ok := src[k].(float64); ok {
			return &v
		}
		return nil
	}
	count := func(k string) *int {
		if v, ok := src[k].(float64); ok {
			n := int(v)
			return &n
		}
		return nil
	}
	dst.Minimum, dst.Maximum = num("minimum"), num("maximum")
	dst.MinLength, dst.MaxLength = count("minLength"), count("maxLength")
	dst.MinItems, dst.MaxItems = count("minItems"), count("maxItems")
	if e, ok := src["enum"].([]any); ok {
		dst.Enum = e
	}
	// A pattern is left to the REST API: it is written for ECMA-262 and
	// Python engines (\uXXXX), which Go's regexp does not read, and the
	// server's refusal names the rule in words.
	return nil
}

// inputSchema infers T's schema and bounds the named properties as the
// OpenAPI document does.
func inputSchema[T any](bounds map[string]map[string]any) (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	for name, src := range bounds {
		p := s.Properties[name]
		if p == nil {
			return nil, fmt.Errorf("input has no property %q", name)
		}
		if p.Items != nil && src["type"] != "array" {
			p = p.Items // the bound is the elements'
		}
		if err := bound(p, src); err != nil {
			return nil, fmt.Errorf("property %q: %w", name, err)
		}
	}
	return s, nil
}

// toolError words a refusal for the agent: dmar's message, its code and the
// field to change.
func toolError(err error) error {
	var e *api.Error
	if !errors.As(err, &e) {
		return err
	}
	msg := fmt.Sprintf("dmar refused the call (%d %s): %s", e.StatusCode, e.Code, e.Message)
	if e.Field != "" {
		msg += " [field: " + e.Field + "]"
	}
	return errors.New(msg)
}

func ptr[T any](v T) *T { return &v }

// addTools registers every tool on the write server and all but the write
// tools on the read server.
func (s *Service) addTools(spec openAPI) error {
	in, err := toolInputSchemas(spec)
	if err != nil {
		return err
	}
	s.addReadTools(s.read, in)
	s.addReadTools(s.write, in)
	if s.cfg.Documents {
		s.addWriteTools(in)
	}
	return nil
}

// toolSchemas are the tools' input schemas.
type toolSchemas struct {
	retrieve, link, subgraph, document, put, delete, answer *jsonschema.Schema
}

// toolInputSchemas builds the tools' input schemas, bounded as the OpenAPI
// document spec bounds the REST API's fields.
func toolInputSchemas(spec openAPI) (in toolSchemas, err error) {
	in.retrieve, err = inputSchema[RetrieveInput](map[string]map[string]any{
		"query": spec.property("RetrieveRequest", "query"), "k": spec.property("RetrieveRequest", "k"),
		"method": spec.property("RetrieveRequest", "method"), "any_entities": spec.property("Filter", "any_entities"),
		"ids": spec.property("Filter", "ids")})
	if err != nil {
		return in, fmt.Errorf("mcp: retrieve: %w", err)
	}
	in.link, err = inputSchema[LinkInput](map[string]map[string]any{"text": spec.property("LinkRequest", "text")})
	if err != nil {
		return in, fmt.Errorf("mcp: link: %w", err)
	}
	const sg = "/v1/entities/{qid}/subgraph"
	in.subgraph, err = inputSchema[SubgraphInput](map[string]map[string]any{
		"qid": spec.parameter(sg, "get", "qid"), "hops": spec.parameter(sg, "get", "hops"),
		"limit": spec.parameter(sg, "get", "limit"), "hub_degree": spec.parameter(sg, "get", "hub_degree")})
	if err != nil {
		return in, fmt.Errorf("mcp: subgraph: %w", err)
	}
	in.document, err = inputSchema[DocumentInput](map[string]map[string]any{"id": spec.parameter("/v1/documents/{id}", "get", "id")})
	if err != nil {
		return in, fmt.Errorf("mcp: get_document: %w", err)
	}
	in.put, err = inputSchema[PutInput](map[string]map[string]any{"documents": spec.property("PutDocumentsRequest", "documents")})
	if err != nil {
		return in, fmt.Errorf("mcp: put_documents: %w", err)
	}
	in.delete, err = inputSchema[DeleteInput](map[string]map[string]any{"ids": spec.property("DeleteDocumentsRequest", "ids")})
	if err != nil {
		return in, fmt.Errorf("mcp: delete_documents: %w", err)
	}
	in.answer, err = inputSchema[AnswerInput](map[string]map[string]any{
		"query": spec.property("AnswerRequest", "query"), "k": spec.property("AnswerRequest", "k"), "method": spec.property("AnswerRequest", "method")})
	if err != nil {
		return in, fmt.Errorf("mcp: answer: %w", err)
	}
	return in, nil
}

// addReadTools registers the tools that change nothing on srv.
func (s *Service) addReadTools(srv *mcp.Server, in toolSchemas) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
	mcp.AddTool(srv, &mcp.Tool{Name: "retrieve", Title: "Retrieve evidence documents", InputSchema: in.retrieve, Annotations: readOnly,
		Description: "Find the documents that answer a question, best first. Each result has its score, the Wikidata entities it mentions, " +
			"and the knowledge-graph paths from the question's entities to it (e.g. Christopher Nolan -[director of]-> Inception): " +
			"cite those paths when they explain an answer. Ask one question per call."}, s.retrieve)
	mcp.AddTool(srv, &mcp.Tool{Name: "link", Title: "Link entities in a text", InputSchema: in.link, Annotations: readOnly,
		Description: "Find the knowledge-graph entities (Wikidata QIDs with labels) a text mentions, with where each mention is. " +
			"Use the QIDs with subgraph, or as retrieve's any_entities."}, s.link)
	mcp.AddTool(srv, &mcp.Tool{Name: "subgraph", Title: "An entity's neighbourhood", InputSchema: in.subgraph, Annotations: readOnly,
		Description: "The knowledge-graph neighbourhood of one entity: its nodes (QID, label, distance) and typed edges (property id and label). " +
			"Use it to see how entities relate, e.g. which films a director directed."}, s.subgraph)
	if s.cfg.Documents {
		mcp.AddTool(srv, &mcp.Tool{Name: "get_document", Title: "Read a document", InputSchema: in.document, Annotations: readOnly,
			Description: "A whole stored document by id (as retrieve returns it), with its metadata and the entities it mentions."}, s.getDocument)
	}
	if s.cfg.Answer {
		mcp.AddTool(srv, &mcp.Tool{Name: "answer", Title: "Answer a question from the documents", InputSchema: in.answer,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
			Description: "Retrieve, then have dmar's configured language model write a short answer from the top documents, " +
				"citing their ids in square brackets. Prefer retrieve when you will write the answer yourself."}, s.answer)
	}
}

// addWriteTools registers the document-writing tools on the write server,
// and their refusal on the read server.
func (s *Service) addWriteTools(in toolSchemas) {
	put := &mcp.Tool{Name: "put_documents", Title: "Add or replace documents", InputSchema: in.put,
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
		Description: "Add documents to the corpus, or replace those with the same id; they are linked to the knowledge graph and searchable " +
			"when the call returns. Documents that break a rule are listed in rejected with the field and reason; the others are written. " +
			"Needs an API key with write permission."}
	del := &mcp.Tool{Name: "delete_documents", Title: "Delete documents", InputSchema: in.delete,
		Annotations: &mcp.ToolAnnotations{IdempotentHint: false, DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
		Description: "Delete documents by id, all or nothing: if an id is unknown, nothing is deleted and the error names it. " +
			"Needs an API key with write permission."}
	mcp.AddTool(s.write, put, s.putDocuments)
	mcp.AddTool(s.write, del, s.deleteDocuments)
	// The read server's middleware answers calls of these names: the REST
	// API refuses a read-only key itself.
	for _, name := range []string{put.Name, del.Name} {
		s.writeHandler[name] = func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.refuseOrCall(ctx, req, name, req.Params.Arguments)
		}
	}
}

// refuseOrCall runs a write tool for a caller the tool list left it out
// for: the REST API answers with its own refusal (or, had the key been
// changed since, does the work).
func (s *Service) refuseOrCall(ctx context.Context, req *mcp.CallToolRequest, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	var err error
	switch name {
	case "put_documents":
		var in PutInput
		if err = json.Unmarshal(args, &in); err == nil {
			var out api.PutDocumentsResponse
			if err = s.call(ctx, s.credentials(req), http.MethodPut, "/v1/documents", putBody(in), &out); err == nil {
				return structured(out)
			}
		}
	case "delete_documents":
		var in DeleteInput
		if err = json.Unmarshal(args, &in); err == nil {
			var out api.DeleteDocumentsResponse
			if err = s.call(ctx, s.credentials(req), http.MethodPost, "/v1/documents/delete", api.DeleteDocumentsRequest{IDs: in.IDs}, &out); err == nil {
				return structured(out)
			}
		}
	}
	res := &mcp.CallToolResult{}
	res.SetError(toolError(err))
	return res, nil
}

func structured(v any) (*mcp.CallToolResult, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
}

// queryBody is a retrieve or answer request's body: the query, and k and
// the method where the agent set them (the server's defaults otherwise).
func queryBody(query string, k *int, method *string) map[string]any {
	body := map[string]any{"query": query}
	if k != nil {
		body["k"] = *k
	}
	if method != nil {
		body["method"] = *method
	}
	return body
}

func (s *Service) retrieve(ctx context.Context, req *mcp.CallToolRequest, in RetrieveInput) (*mcp.CallToolResult, RetrieveOutput, error) {
	body := queryBody(in.Query, in.K, in.Method)
	if len(in.AnyEntities) > 0 || len(in.IDs) > 0 {
		f := map[string]any{}
		if len(in.AnyEntities) > 0 {
			f["any_entities"] = in.AnyEntities
		}
		if len(in.IDs) > 0 {
			f["ids"] = in.IDs
		}
		body["filter"] = f
	}
	var raw retrieveAnswer
	if err := s.call(ctx, s.credentials(req), http.MethodPost, "/v1/retrieve", body, &raw); err != nil {
		return nil, RetrieveOutput{}, toolError(err)
	}
	out := RetrieveOutput{Query: raw.Query, ReformulatedQuery: raw.ReformulatedQuery, QueryEntities: []Entity{}, Fallbacks: raw.Fallbacks}
	for _, e := range raw.QueryEntities {
		out.QueryEntities = append(out.QueryEntities, Entity{QID: e.QID, Label: e.Label, Surface: e.Surface})
	}
	results, err := raw.results()
	if err != nil {
		return nil, RetrieveOutput{}, err
	}
	out.Results = results
	return nil, out, nil
}

// retrieveAnswer is the part of POST /v1/retrieve's answer the tools pass
// on; each result is kept raw, so that breakdown fields the server adds
// reach the agent unchanged.
type retrieveAnswer struct {
	Query             string            `json:"query"`
	ReformulatedQuery string            `json:"reformulated_query"`
	QueryEntities     []api.QueryEntity `json:"query_entities"`
	Results           []json.RawMessage `json:"results"`
	Fallbacks         []api.Fallback    `json:"fallbacks"`
}

func (r retrieveAnswer) results() ([]Result, error) {
	out := []Result{}
	for _, raw := range r.Results {
		var d api.Doc
		var b struct {
			Breakdown map[string]any `json:"breakdown"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("decode a result: %w", err)
		}
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, fmt.Errorf("decode a result: %w", err)
		}
		delete(b.Breakdown, "paths") // in Paths
		if b.Breakdown == nil {
			b.Breakdown = map[string]any{}
		}
		res := Result{Rank: d.Rank, ID: d.ID, Title: d.Title, Text: d.Text, Score: d.Score, Entities: d.Entities, Paths: []Path{}, Breakdown: b.Breakdown}
		if res.Entities == nil {
			res.Entities = []string{}
		}
		for _, p := range d.Breakdown.Paths {
			res.Paths = append(res.Paths, Path{Text: p.Text, Path: p.Path, From: p.From, To: p.To, Relevance: p.Relevance})
		}
		out = append(out, res)
	}
	return out, nil
}

func (s *Service) link(ctx context.Context, req *mcp.CallToolRequest, in LinkInput) (*mcp.CallToolResult, LinkOutput, error) {
	var out LinkOutput
	if err := s.call(ctx, s.credentials(req), http.MethodPost, "/v1/link", api.LinkRequest{Text: in.Text}, &out); err != nil {
		return nil, LinkOutput{}, toolError(err)
	}
	if out.Mentions == nil {
		out.Mentions = []api.QueryEntity{}
	}
	return nil, out, nil
}

func (s *Service) subgraph(ctx context.Context, req *mcp.CallToolRequest, in SubgraphInput) (*mcp.CallToolResult, SubgraphOutput, error) {
	q := url.Values{}
	for name, v := range map[string]*int{"hops": in.Hops, "limit": in.Limit, "hub_degree": in.HubDegree} {
		if v != nil {
			q.Set(name, strconv.Itoa(*v))
		}
	}
	path := "/v1/entities/" + url.PathEscape(in.QID) + "/subgraph"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out SubgraphOutput
	if err := s.call(ctx, s.credentials(req), http.MethodGet, path, nil, &out); err != nil {
		return nil, SubgraphOutput{}, toolError(err)
	}
	if out.Nodes == nil {
		out.Nodes = []api.Node{}
	}
	if out.Edges == nil {
		out.Edges = []api.Edge{}
	}
	return nil, out, nil
}

func (s *Service) getDocument(ctx context.Context, req *mcp.CallToolRequest, in DocumentInput) (*mcp.CallToolResult, Document, error) {
	var out Document
	if err := s.call(ctx, s.credentials(req), http.MethodGet, "/v1/documents/"+url.PathEscape(in.ID), nil, &out); err != nil {
		return nil, Document{}, toolError(err)
	}
	if out.Entities == nil {
		out.Entities = []api.LinkedEntity{}
	}
	return nil, out, nil
}

func putBody(in PutInput) api.PutDocumentsRequest {
	body := api.PutDocumentsRequest{Documents: make([]api.DocumentInput, len(in.Documents))}
	for i, d := range in.Documents {
		body.Documents[i] = api.DocumentInput{ID: d.ID, Title: d.Title, Text: d.Text}
		if d.Metadata != nil {
			body.Documents[i].Metadata, _ = json.Marshal(d.Metadata)
		}
	}
	return body
}

func (s *Service) putDocuments(ctx context.Context, req *mcp.CallToolRequest, in PutInput) (*mcp.CallToolResult, api.PutDocumentsResponse, error) {
	var out api.PutDocumentsResponse
	if err := s.call(ctx, s.credentials(req), http.MethodPut, "/v1/documents", putBody(in), &out); err != nil {
		return nil, api.PutDocumentsResponse{}, toolError(err)
	}
	if out.Rejected == nil {
		out.Rejected = []api.RejectedDocument{}
	}
	return nil, out, nil
}

func (s *Service) deleteDocuments(ctx context.Context, req *mcp.CallToolRequest, in DeleteInput) (*mcp.CallToolResult, api.DeleteDocumentsResponse, error) {
	var out api.DeleteDocumentsResponse
	if err := s.call(ctx, s.credentials(req), http.MethodPost, "/v1/documents/delete", api.DeleteDocumentsRequest{IDs: in.IDs}, &out); err != nil {
		return nil, api.DeleteDocumentsResponse{}, toolError(err)
	}
	return nil, out, nil
}

func (s *Service) answer(ctx context.Context, req *mcp.CallToolRequest, in AnswerInput) (*mcp.CallToolResult, AnswerOutput, error) {
	body := queryBody(in.Query, in.K, in.Method)
	var raw struct {
		api.AnswerResponse
		Retrieval *retrieveAnswer `json:"retrieval"`
	}
	if err := s.call(ctx, s.credentials(req), http.MethodPost, "/v1/answer", body, &raw); err != nil {
		return nil, AnswerOutput{}, toolError(err)
	}
	out := AnswerOutput{Answer: raw.Answer, Citations: raw.Citations, DroppedCitations: raw.DroppedCitations, Sources: raw.Sources, Model: raw.Model, Results: []Result{}}
	if raw.Retrieval != nil {
		rs, err := raw.Retrieval.results()
		if err != nil {
			return nil, AnswerOutput{}, err
		}
		out.Results = rs
	}
	return nil, out, nil
}
