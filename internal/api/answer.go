package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// AnswerRequest is the body of POST /v1/answer: a retrieve request (the query
// and any retrieval option, flat) and whether to stream the answer.
type AnswerRequest struct {
	RetrieveRequest
	// Stream asks for server-sent events (AnswerStream) instead of one JSON body.
	Stream bool `json:"stream,omitempty"`
	// EvidenceTokens is the budget of reader tokens for the evidence, the
	// sentences of the top results that answer the query (default 160); 0
	// shows the reader the first 500 characters of the top 3 results instead.
	EvidenceTokens *int `json:"evidence_tokens,omitempty"`
	// GraphAnswer lets a trusted knowledge-graph path answer without the
	// reader (default true).
	GraphAnswer *bool `json:"graph_answer,omitempty"`
}

// AnswerResponse is the body of a successful POST /v1/answer: a short answer
// written by the configured generator from the top results, the ids it cites
// (every one a result of Retrieval the generator was shown), and the
// retrieval itself, as POST /v1/retrieve returns it.
type AnswerResponse struct {
	Answer    string   `json:"answer"`
	Citations []string `json:"citations"`
	// DroppedCitations are ids the generator cited that it was not shown:
	// removed from Answer and Citations.
	DroppedCitations []string `json:"dropped_citations,omitempty"`
	Sources          []string `json:"sources"` // ids of the results the generator read, best first
	// Source says who answered: "graph" (a trusted knowledge-graph path,
	// no reader call; GraphPath is the path) or "reader".
	Source    string `json:"source"`
	GraphPath string `json:"graph_path,omitempty"`
	// Evidence is what the reader read, when it read selected sentences.
	Evidence  []AnswerEvidence   `json:"evidence,omitempty"`
	Model     string             `json:"model"`      // the reader's model; empty for a graph answer
	TimingsMS map[string]float64 `json:"timings_ms"` // retrieve, generate, total
	// Retrieval is the retrieval answered from. In a stream it comes in its
	// own event, before the answer, and the final event leaves it out.
	Retrieval *RetrieveResponse `json:"retrieval,omitempty"`
}

// AnswerEvidence is one sentence (or graph fact) the reader read: its
// document's id and the sentence's index in it (-1 for a fact).
type AnswerEvidence struct {
	ID       string `json:"id"`
	Sentence int    `json:"sentence"`
	Text     string `json:"text"`
	Fact     bool   `json:"fact,omitempty"`
}

// AnswerDelta is the data of a stream's "delta" event: the next piece of the
// answer as the generator writes it (before citations are checked).
type AnswerDelta struct {
	Text string `json:"text"`
}

// The events of POST /v1/answer with "stream": true, in order: one
// "retrieval" (a RetrieveResponse), "delta"s (AnswerDelta), then one "answer"
// (an AnswerResponse without its retrieval) or one "error" (an ErrorBody).
const (
	EventRetrieval = "retrieval"
	EventDelta     = "delta"
	EventAnswer    = "answer"
	EventError     = "error"
)

// Answer retrieves and answers (POST /v1/answer) in one JSON body; req.Stream
// is ignored.
func (c *Client) Answer(ctx context.Context, req *AnswerRequest) (*AnswerResponse, error) {
	r := *req
	r.Stream = false
	var out AnswerResponse
	if err := c.Do(ctx, http.MethodPost, "/v1/answer", &r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AnswerStream retrieves and answers with "stream": true, calling onDelta
// (may be nil) with each piece of the answer as it arrives. It returns the
// final answer with its Retrieval filled in from the stream's first event.
// An "error" event, or a stream that ends without an answer, is an *Error.
func (c *Client) AnswerStream(ctx context.Context, req *AnswerRequest, onDelta func(string)) (*AnswerResponse, error) {
	r := *req
	r.Stream = true
	body, err := json.Marshal(&r)
	if err != nil {
		return nil, fmt.Errorf("dmar client: POST /v1/answer: encode the request: %w", err)
	}
	hr, err := c.newRequest(ctx, http.MethodPost, "/v1/answer", bytes.NewReader(body), true, "text/event-stream")
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("dmar client: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, responseError(resp, raw)
	}
	var (
		ret   *RetrieveResponse
		event string
		data  strings.Builder
	)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case line == "" && event != "":
			raw := []byte(data.String())
			name := event
			event = ""
			data.Reset()
			switch name {
			case EventRetrieval:
				ret = new(RetrieveResponse)
				if err := json.Unmarshal(raw, ret); err != nil {
					return nil, fmt.Errorf("dmar client: POST /v1/answer: decode the retrieval event: %w", err)
				}
			case EventDelta:
				var d AnswerDelta
				if err := json.Unmarshal(raw, &d); err != nil {
					return nil, fmt.Errorf("dmar client: POST /v1/answer: decode a delta event: %w", err)
				}
				if onDelta != nil {
					onDelta(d.Text)
				}
			case EventAnswer:
				var out AnswerResponse
				if err := json.Unmarshal(raw, &out); err != nil {
					return nil, fmt.Errorf("dmar client: POST /v1/answer: decode the answer event: %w", err)
				}
				out.Retrieval = ret
				return &out, nil
			case EventError:
				e := &Error{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Request-ID")}
				var b ErrorBody
				if json.Unmarshal(raw, &b) == nil {
					e.Code, e.Message, e.Field = b.Error.Code, b.Error.Message, b.Error.Field
				}
				return nil, e
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("dmar client: POST /v1/answer: read the stream: %w", err)
	}
	return nil, &Error{StatusCode: resp.StatusCode, Code: CodeInternal, Message: "the answer stream ended without an answer", RequestID: resp.Header.Get("X-Request-ID")}
}
