package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
)

// DocumentStore is what the document routes need (docstore.Store).
type DocumentStore interface {
	Put(ctx context.Context, docs []docstore.Input) (docstore.PutResult, error)
	Delete(ctx context.Context, ids []string) (int, error)
	Get(ctx context.Context, id string) (docstore.Document, error)
	Entities(ctx context.Context, qids []string) (map[string]kg.Entity, error)
}

var _ DocumentStore = (*docstore.Store)(nil)

// writeKey is the request's flag, set by authenticate, that its API key
// may write.
const writeKey = "api_key_write"

func (s *Server) documentRoutes(r *gin.Engine, jsonBody gin.HandlerFunc) {
	r.PUT("/v1/documents", jsonBody, s.canWrite, s.putDocuments)
	r.POST("/v1/documents/delete", jsonBody, s.canWrite, s.deleteDocuments)
	r.DELETE("/v1/documents/:id", s.notBatchPath, s.canWrite, s.deleteDocument)
	r.GET("/v1/documents/:id", s.notBatchPath, s.getDocument)
	r.HEAD("/v1/documents/:id", s.notBatchPath, s.getDocument)
}

// canWrite refuses writes with a read-only key when keys are configured.
func (s *Server) canWrite(c *gin.Context) {
	if len(s.keys) > 0 && !c.GetBool(writeKey) {
		s.fail(c, errs.E(errs.Forbidden, "API key %q is read-only: changing documents needs a key with write permission (server.auth.keys[].write)", c.GetString("api_key")))
		return
	}
	if s.cfg.Documents == nil {
		s.fail(c, &errs.Error{Code: errs.Unavailable, Message: "this server has no document store"})
		return
	}
	c.Next()
}

// DecodePutDocuments reads a PUT /v1/documents body strictly, under
// documentRules: ids kept exactly, at most a batch of documents, metadata
// nested at most 32 levels.
func DecodePutDocuments(r io.Reader) (api.PutDocumentsRequest, error) {
	return decodeDocumentBody(r, func(req api.PutDocumentsRequest) bool { return req.Documents != nil },
		"documents", `{"documents": [{"id", "title", "text", "metadata"?}]}`)
}

// DecodeDeleteDocuments reads a POST /v1/documents/delete body as strictly.
func DecodeDeleteDocuments(r io.Reader) (api.DeleteDocumentsRequest, error) {
	return decodeDocumentBody(r, func(req api.DeleteDocumentsRequest) bool { return req.IDs != nil }, "ids", `{"ids": ["ID", ...]}`)
}

// decodeDocumentBody decodes a document route's body, whose field must be
// given (has), as shape shows.
func decodeDocumentBody[T any](r io.Reader, has func(T) bool, field, shape string) (T, error) {
	var req T
	if err := decodeStrictLimit(r, &req, api.MaxDocumentsBodyBytes, documentRules); err != nil {
		return req, err
	}
	if !has(req) {
		return req, errs.Field(field, "is required: %s", shape)
	}
	return req, nil
}

func (s *Server) putDocuments(c *gin.Context) {
	req, err := DecodePutDocuments(c.Request.Body)
	if err != nil {
		s.fail(c, err)
		return
	}
	in := make([]docstore.Input, len(req.Documents))
	for i, d := range req.Documents {
		// A wrong type is a malformed request, refused whole, as an id
		// that is not a string is; the rules on values are judged per
		// document below.
		if m := bytes.TrimSpace(d.Metadata); len(m) > 0 && m[0] != '{' {
			s.fail(c, errs.Field(fmt.Sprintf("documents[%d].metadata", i), "must be a JSON object"))
			return
		}
		in[i] = docstore.Input{ID: d.ID, Title: d.Title, Text: d.Text, Metadata: d.Metadata}
	}
	// A well-formed batch is answered 200, even when every document is
	// rejected: the status says the batch was read, rejected says which
	// documents were not written and why.
	res, err := s.cfg.Documents.Put(c.Request.Context(), in)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := api.PutDocumentsResponse{Created: res.Created, Updated: res.Updated, Unchanged: res.Unchanged, Rejected: []api.RejectedDocument{}}
	for _, r := range res.Rejected {
		out.Rejected = append(out.Rejected, api.RejectedDocument{Index: r.Index, ID: r.ID, Field: r.Field, Code: string(r.Code), Reason: r.Reason})
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) deleteDocuments(c *gin.Context) {
	req, err := DecodeDeleteDocuments(c.Request.Body)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.delete(c, req.IDs)
}

// batchDeletePath is POST only: GET, HEAD and DELETE on it would otherwise
// match /v1/documents/{id} with the id "delete". A document with that id
// is deleted with POST /v1/documents/delete.
const batchDeletePath = "/v1/documents/delete"

// onlyPost refuses a method other than POST on the batch delete path, with
// the Allow its OpenAPI path has.
func (s *Server) onlyPost(c *gin.Context) bool {
	if c.Request.URL.Path != batchDeletePath {
		return false
	}
	c.Header("Allow", http.MethodPost)
	s.fail(c, errs.E(errs.BadMethod, "method %s is not allowed on %s; allowed: POST", clip(c.Request.Method, maxEcho), batchDeletePath))
	return true
}

// notBatchPath keeps the {id} routes off the batch delete path.
func (s *Server) notBatchPath(c *gin.Context) {
	if !s.onlyPost(c) {
		c.Next()
	}
}

func (s *Server) deleteDocument(c *gin.Context) {
	id := c.Param("id")
	if err := checkPathID(id); err != nil {
		s.fail(c, err)
		return
	}
	s.delete(c, []string{id})
}

// checkPathID applies the store's id rule to an id in a path, naming it
// "id" (docstore.Limits.CheckID; a path's id is kept exactly too).
func checkPathID(id string) error {
	if code, why := docstore.DefaultLimits().CheckID(id); why != "" {
		return &errs.Error{Code: code, Field: "id", Message: "id: " + why}
	}
	return nil
}

func (s *Server) delete(c *gin.Context, ids []string) {
	n, err := s.cfg.Documents.Delete(c.Request.Context(), ids)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, api.DeleteDocumentsResponse{Deleted: n})
}

func (s *Server) getDocument(c *gin.Context) {
	if s.cfg.Documents == nil {
		s.fail(c, &errs.Error{Code: errs.Unavailable, Message: "this server has no document store"})
		return
	}
	id := c.Param("id")
	if err := checkPathID(id); err != nil {
		s.fail(c, err)
		return
	}
	d, err := s.cfg.Documents.Get(c.Request.Context(), id)
	if err != nil {
		s.fail(c, err)
		return
	}
	names, err := s.cfg.Documents.Entities(c.Request.Context(), d.Entities)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := api.StoredDocument{ID: d.ID, Title: d.Title, Text: d.Text, Metadata: d.Metadata, Entities: []api.LinkedEntity{}}
	for _, q := range d.Entities {
		out.Entities = append(out.Entities, api.LinkedEntity{QID: q, Label: names[q].Label})
	}
	s.reply(c, out, nil)
}
