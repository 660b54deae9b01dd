package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
)

// DocumentInput is one document of PUT /v1/documents. Metadata, when
// given, is a JSON object kept with the document and returned by GET.
type DocumentInput struct {
	ID       string          `json:"id"`
	Title    string          `json:"title"`
	Text     string          `json:"text"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// PutDocumentsRequest is the body of PUT /v1/documents: a batch upsert.
type PutDocumentsRequest struct {
	Documents []DocumentInput `json:"documents"`
}

// PutDocumentsResponse counts a batch upsert. Rejected documents were not
// written; the others were, and are searchable once the answer arrives.
type PutDocumentsResponse struct {
	Created   int                `json:"created"`
	Updated   int                `json:"updated"`
	Unchanged int                `json:"unchanged"`
	Rejected  []RejectedDocument `json:"rejected"`
}

// RejectedDocument is a document of a batch that was not written, and why.
type RejectedDocument struct {
	Index  int    `json:"index"` // its position in the batch
	ID     string `json:"id,omitempty"`
	Field  string `json:"field"` // e.g. documents[3].text
	Code   string `json:"code"`  // invalid_argument or payload_too_large
	Reason string `json:"reason"`
}

// DeleteDocumentsRequest is the body of POST /v1/documents/delete: a batch
// delete, all or nothing.
type DeleteDocumentsRequest struct {
	IDs []string `json:"ids"`
}

// DeleteDocumentsResponse says how many documents a delete removed.
type DeleteDocumentsResponse struct {
	Deleted int `json:"deleted"`
}

// StoredDocument is GET /v1/documents/{id}: the document with its links.
type StoredDocument struct {
	ID       string          `json:"id"`
	Title    string          `json:"title"`
	Text     string          `json:"text"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
	Entities []LinkedEntity  `json:"entities"`
}

// LinkedEntity is a knowledge-graph entity a document mentions.
type LinkedEntity struct {
	QID   string `json:"qid"`
	Label string `json:"label,omitempty"`
}

// MaxDocumentsBodyBytes bounds the body of the document routes (bigger
// than MaxBodyBytes: a batch carries whole documents).
const MaxDocumentsBodyBytes = 8 << 20

// PutDocuments upserts a batch (PUT /v1/documents).
func (c *Client) PutDocuments(ctx context.Context, req *PutDocumentsRequest) (*PutDocumentsResponse, error) {
	var out PutDocumentsResponse
	if err := c.Do(ctx, http.MethodPut, "/v1/documents", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Document fetches a stored document with its links (GET /v1/documents/{id}).
func (c *Client) Document(ctx context.Context, id string) (*StoredDocument, error) {
	var out StoredDocument
	if err := c.Do(ctx, http.MethodGet, "/v1/documents/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteDocument deletes one document (DELETE /v1/documents/{id}); an
// unknown id is a 404 *Error naming it.
func (c *Client) DeleteDocument(ctx context.Context, id string) (*DeleteDocumentsResponse, error) {
	var out DeleteDocumentsResponse
	if err := c.Do(ctx, http.MethodDelete, "/v1/documents/"+url.PathEscape(id), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteDocuments deletes a batch, all or nothing (POST /v1/documents/delete).
func (c *Client) DeleteDocuments(ctx context.Context, ids []string) (*DeleteDocumentsResponse, error) {
	var out DeleteDocumentsResponse
	if err := c.Do(ctx, http.MethodPost, "/v1/documents/delete", &DeleteDocumentsRequest{IDs: ids}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PutDocumentsFrom upserts the documents of a JSONL stream (one
// DocumentInput a line) in batches of batch, and sums the answers. Each
// rejection's Index is the document's line number (from 1). It stops at
// the first failed request, returning what was counted so far.
func PutDocumentsFrom(ctx context.Context, c *Client, r io.Reader, batch int) (PutDocumentsResponse, error) {
	var sum PutDocumentsResponse
	if batch <= 0 {
		batch = 64
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), MaxDocumentsBodyBytes)
	var docs []DocumentInput
	var lines []int
	flush := func() error {
		if len(docs) == 0 {
			return nil
		}
		res, err := c.PutDocuments(ctx, &PutDocumentsRequest{Documents: docs})
		if err != nil {
			return fmt.Errorf("documents of lines %d-%d: %w", lines[0], lines[len(lines)-1], err)
		}
		sum.Created += res.Created
		sum.Updated += res.Updated
		sum.Unchanged += res.Unchanged
		for _, rj := range res.Rejected {
			rj.Index = lines[rj.Index]
			sum.Rejected = append(sum.Rejected, rj)
		}
		docs, lines = docs[:0], lines[:0]
		return nil
	}
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var d DocumentInput
		if err := json.Unmarshal(line, &d); err != nil {
			return sum, fmt.Errorf("line %d: %w", n, err)
		}
		docs, lines = append(docs, d), append(lines, n)
		if len(docs) == batch {
			if err := flush(); err != nil {
				return sum, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return sum, err
	}
	return sum, flush()
}

// PutDocumentsFile is dmar docs put: PutDocumentsFrom of the JSONL file at
// path (stdin for "-"), then the counts and every rejection on w, also
// when a request failed part way.
func PutDocumentsFile(ctx context.Context, c *Client, path string, stdin io.Reader, batch int, w io.Writer) error {
	in := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	res, err := PutDocumentsFrom(ctx, c, in, batch)
	fmt.Fprintf(w, "created %d, updated %d, unchanged %d, rejected %d\n", res.Created, res.Updated, res.Unchanged, len(res.Rejected))
	for _, r := range res.Rejected {
		fmt.Fprintf(w, "  rejected %q: %s\n", r.ID, r.Reason)
	}
	return err
}
