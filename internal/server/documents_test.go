package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/server"
)

// documentServer is a server over its own copy of the codexm-film index,
// with a document store logging to a temporary folder.
func documentServer(t *testing.T, keys ...server.APIKey) *server.Server {
	t.Helper()
	router(t)
	ctx := context.Background()
	x := memindex.New(memindex.DefaultParams())
	if err := x.Put(ctx, append([]retrieval.Document(nil), testDocs...)); err != nil {
		t.Fatal(err)
	}
	st, err := docstore.Open(ctx, docstore.Config{Dir: t.TempDir(), Index: x, Graph: testGraph, KGKey: "film", Encoder: letterEncoder{}, Replay: true,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := pipeline.New(pipeline.Config{Graph: testGraph, Index: x, Encoder: letterEncoder{}})
	if err != nil {
		t.Fatal(err)
	}
	return server.New(server.Config{Pipeline: p, Documents: st, APIKeys: keys})
}

func decodeInto[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %T: %v in %.300s", v, err, b)
	}
	return v
}

// resultIDs are the ids of a retrieval's results.
func resultIDs(t *testing.T, h *server.Server, query string) []string {
	t.Helper()
	w := do(t, h, "POST", "/v1/retrieve", fmt.Sprintf(`{"query": %q, "k": 10, "p": 20}`, query))
	if w.Code != 200 {
		t.Fatalf("retrieve: %d %s", w.Code, w.Body)
	}
	var ids []string
	for _, d := range decodeInto[api.RetrieveResponse](t, w.Body.Bytes()).Results {
		ids = append(ids, d.ID)
	}
	return ids
}

func has(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestDocumentsLifecycle(t *testing.T) {
	h := documentServer(t)
	put := `{"documents": [{"id": "live-1", "title": "Zyxwvut", "text": "Zyxwvut is a film directed by Christopher Nolan.", "metadata": {"source": "test"}}]}`
	w := do(t, h, "PUT", "/v1/documents", put)
	if w.Code != 200 {
		t.Fatalf("put: %d %s", w.Code, w.Body)
	}
	if r := decodeInto[api.PutDocumentsResponse](t, w.Body.Bytes()); r.Created != 1 || r.Updated+r.Unchanged+len(r.Rejected) != 0 {
		t.Errorf("put counts %+v, want 1 created", r)
	}
	if ids := resultIDs(t, h, "Zyxwvut"); !has(ids, "live-1") {
		t.Errorf("retrieve right after the put: %v lacks live-1", ids)
	}
	w = do(t, h, "GET", "/v1/documents/live-1", "")
	d := decodeInto[api.StoredDocument](t, w.Body.Bytes())
	if w.Code != 200 || d.Text == "" || string(d.Metadata) != `{"source":"test"}` {
		t.Fatalf("get: %d %s", w.Code, w.Body)
	}
	var linked []string
	for _, e := range d.Entities {
		linked = append(linked, e.QID+"="+e.Label)
	}
	if !has(linked, "Q25191=Christopher Edward Nolan") {
		t.Errorf("get: entities %v, want Nolan linked with his label", linked)
	}
	if r := decodeInto[api.PutDocumentsResponse](t, do(t, h, "PUT", "/v1/documents", put).Body.Bytes()); r.Unchanged != 1 {
		t.Errorf("same put again: %+v, want unchanged", r)
	}
	changed := strings.Replace(put, "Christopher Nolan", "someone else", 1)
	if r := decodeInto[api.PutDocumentsResponse](t, do(t, h, "PUT", "/v1/documents", changed).Body.Bytes()); r.Updated != 1 {
		t.Errorf("changed put: %+v, want updated", r)
	}
	if d := decodeInto[api.StoredDocument](t, do(t, h, "GET", "/v1/documents/live-1", "").Body.Bytes()); len(d.Entities) != 0 {
		t.Errorf("after the update the links are %v, want none", d.Entities)
	}
	if w := do(t, h, "DELETE", "/v1/documents/live-1", ""); w.Code != 200 || decodeInto[api.DeleteDocumentsResponse](t, w.Body.Bytes()).Deleted != 1 {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	if ids := resultIDs(t, h, "Zyxwvut"); has(ids, "live-1") {
		t.Errorf("retrieve after the delete still finds live-1: %v", ids)
	}
	for _, req := range [][2]string{{"GET", "/v1/documents/live-1"}, {"DELETE", "/v1/documents/live-1"}} {
		w := do(t, h, req[0], req[1], "")
		if e := errorOf(t, w); w.Code != 404 || e.Code != api.CodeNotFound || !strings.Contains(e.Message, `"live-1"`) {
			t.Errorf("%s after delete: %d %+v, want 404 naming live-1", req[0], w.Code, e)
		}
	}
	// A batch delete is all or nothing.
	do(t, h, "PUT", "/v1/documents", `{"documents": [{"id": "a", "text": "alpha"}, {"id": "b", "text": "beta"}]}`)
	w = do(t, h, "POST", "/v1/documents/delete", `{"ids": ["a", "ghost"]}`)
	if e := errorOf(t, w); w.Code != 404 || !strings.Contains(e.Message, `"ghost"`) {
		t.Errorf("batch delete with an unknown id: %d %+v", w.Code, e)
	}
	if w := do(t, h, "GET", "/v1/documents/a", ""); w.Code != 200 {
		t.Errorf("a refused batch delete removed a: %d", w.Code)
	}
	if w := do(t, h, "POST", "/v1/documents/delete", `{"ids": ["a", "b"]}`); w.Code != 200 || decodeInto[api.DeleteDocumentsResponse](t, w.Body.Bytes()).Deleted != 2 {
		t.Errorf("batch delete: %d %s", w.Code, w.Body)
	}
}

func TestDocumentsBadInput(t *testing.T) {
	h := documentServer(t)
	long := strings.Repeat("x", docstore.DefaultLimits().MaxTextChars+1)
	many := strings.Repeat(`{"id": "x", "text": "t"},`, docstore.DefaultLimits().MaxBatch+1)
	for _, c := range []struct {
		name, body string
		status     int
		field      string
	}{
		{"no documents key", `{}`, 400, "documents"},
		{"empty batch", `{"documents": []}`, 400, "documents"},
		{"unknown key", `{"documents": [{"id": "a", "text": "t", "body": "x"}]}`, 400, "documents[0].body"},
		{"wrong type", `{"documents": [{"id": "a", "text": "t"}, {"id": 7, "text": "t"}]}`, 400, "documents[1].id"},
		{"metadata not an object", `{"documents": [{"id": "a", "text": "t", "metadata": [1]}]}`, 400, "documents[0].metadata"},
		{"batch too big", `{"documents": [` + strings.TrimSuffix(many, ",") + `]}`, 413, "documents"},
		{"body too big", `{"documents": [{"id": "a", "text": "` + strings.Repeat("y", api.MaxDocumentsBodyBytes) + `"}]}`, 413, "documents[0].text"},
	} {
		w := do(t, h, "PUT", "/v1/documents", c.body)
		e := errorOf(t, w)
		if w.Code != c.status || e.Field != c.field {
			t.Errorf("%s: %d field %q (%s), want %d naming %q", c.name, w.Code, e.Field, e.Message, c.status, c.field)
		}
	}
	// A well-formed batch is answered 200 even when every document breaks a
	// rule on values: rejected says which and why, and nothing is written.
	for _, c := range []struct {
		name, body, field, code string
	}{
		{"empty id", `{"documents": [{"id": " ", "text": "t"}]}`, "documents[0].id", "invalid_argument"},
		{"nothing to index", `{"documents": [{"id": "a"}]}`, "documents[0].text", "invalid_argument"},
		{"text too long", `{"documents": [{"id": "a", "text": "` + long + `"}]}`, "documents[0].text", "payload_too_large"},
	} {
		w := do(t, h, "PUT", "/v1/documents", c.body)
		r := decodeInto[api.PutDocumentsResponse](t, w.Body.Bytes())
		if w.Code != 200 || r.Created+r.Updated+r.Unchanged != 0 || len(r.Rejected) != 1 || r.Rejected[0].Field != c.field || r.Rejected[0].Code != c.code {
			t.Errorf("%s: %d %s, want 200 rejecting %s with %s", c.name, w.Code, w.Body, c.field, c.code)
		}
	}
	// One bad document among good ones: the good are written, the bad listed.
	w := do(t, h, "PUT", "/v1/documents", `{"documents": [{"id": "ok", "text": "fine"}, {"id": "bad/id", "text": "t"}]}`)
	r := decodeInto[api.PutDocumentsResponse](t, w.Body.Bytes())
	if w.Code != 200 || r.Created != 1 || len(r.Rejected) != 1 || r.Rejected[0].Field != "documents[1].id" || r.Rejected[0].Index != 1 {
		t.Errorf("mixed batch: %d %s", w.Code, w.Body)
	}
}

func TestDocumentsNeedWritePermission(t *testing.T) {
	const reader, writer = "reader-key-0123456789", "writer-key-0123456789"
	h := documentServer(t, server.APIKey{Name: "reader", SHA256: hashOf(reader)}, server.APIKey{Name: "writer", SHA256: hashOf(writer), Write: true})
	body := `{"documents": [{"id": "k1", "text": "keyed"}]}`
	for _, c := range []struct {
		name, method, path, body, key string
		want                          int
	}{
		{"no key", "PUT", "/v1/documents", body, "", 401},
		{"read-only put", "PUT", "/v1/documents", body, reader, 403},
		{"write put", "PUT", "/v1/documents", body, writer, 200},
		{"read-only get", "GET", "/v1/documents/k1", "", reader, 200},
		{"read-only delete", "DELETE", "/v1/documents/k1", "", reader, 403},
		{"read-only batch delete", "POST", "/v1/documents/delete", `{"ids": ["k1"]}`, reader, 403},
		{"write delete", "DELETE", "/v1/documents/k1", "", writer, 200},
	} {
		hdr := map[string]string{}
		if c.key != "" {
			hdr["Authorization"] = "Bearer " + c.key
		}
		w := send(h, c.method, c.path, c.body, hdr)
		if w.Code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, w.Code, w.Body, c.want)
		}
		if w.Code == 403 && !strings.Contains(errorOf(t, w).Message, "read-only") {
			t.Errorf("%s: 403 without saying the key is read-only: %s", c.name, w.Body)
		}
	}
}

// documentSchemas are the document routes' schemas, checked against their
// Go types with the others by TestOpenAPIMatchesRoutes.
var documentSchemas = map[string]any{
	"DocumentInput": api.DocumentInput{}, "PutDocumentsRequest": api.PutDocumentsRequest{}, "PutDocumentsResponse": api.PutDocumentsResponse{},
	"RejectedDocument": api.RejectedDocument{}, "DeleteDocumentsRequest": api.DeleteDocumentsRequest{},
	"DeleteDocumentsResponse": api.DeleteDocumentsResponse{}, "StoredDocument": api.StoredDocument{}, "LinkedEntity": api.LinkedEntity{},
}

// The Go client's document methods against the real router.
func TestClientDocuments(t *testing.T) {
	c := newClient(t, documentServer(t))
	ctx := context.Background()
	r, err := c.PutDocuments(ctx, &api.PutDocumentsRequest{Documents: []api.DocumentInput{{ID: "c1", Title: "Inception", Text: "A Christopher Nolan film."}, {ID: ""}}})
	if err != nil || r.Created != 1 || len(r.Rejected) != 1 || r.Rejected[0].Field != "documents[1].id" {
		t.Fatalf("PutDocuments = %+v, %v", r, err)
	}
	d, err := c.Document(ctx, "c1")
	if err != nil || d.Title != "Inception" || len(d.Entities) == 0 {
		t.Fatalf("Document = %+v, %v", d, err)
	}
	if del, err := c.DeleteDocuments(ctx, []string{"c1"}); err != nil || del.Deleted != 1 {
		t.Fatalf("DeleteDocuments = %+v, %v", del, err)
	}
	_, err = c.DeleteDocument(ctx, "c1")
	var e *api.Error
	if !errors.As(err, &e) || e.StatusCode != 404 || e.Code != api.CodeNotFound || !strings.Contains(e.Message, "c1") {
		t.Errorf("DeleteDocument of a deleted id = %v, want a 404 *api.Error naming it", err)
	}
}
