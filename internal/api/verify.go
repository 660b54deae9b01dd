package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// VerifyRequest is the body of POST /v1/verify: a claim, and any option of
// a RetrieveRequest beside it, flat ({"claim": "...", "k": 5}). The claim is
// what is retrieved with; Options.Query is not sent.
type VerifyRequest struct {
	Claim   string
	Options RetrieveRequest
}

// MarshalJSON writes the claim and the options in one object.
func (r VerifyRequest) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.Options)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "query")
	if m["claim"], err = json.Marshal(r.Claim); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *VerifyRequest) UnmarshalJSON(b []byte) error {
	var c struct {
		Claim string `json:"claim"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	var o RetrieveRequest
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	o.Query = ""
	r.Claim, r.Options = c.Claim, o
	return nil
}

// The verdicts of a VerifyResponse.
const (
	VerdictSupports      = "SUPPORTS"
	VerdictRefutes       = "REFUTES"
	VerdictNotEnoughInfo = "NOT_ENOUGH_INFO"
)

// VerifyResponse is the body of a successful POST /v1/verify: the verdict
// the configured generator gave the claim from the retrieved documents'
// sentences, the sentences it rests on (quoted by the server from those
// documents, never written by the generator), and the retrieval itself, as
// POST /v1/retrieve returns it, with each result's explanation.
type VerifyResponse struct {
	Claim   string `json:"claim"`
	Verdict string `json:"verdict"` // SUPPORTS | REFUTES | NOT_ENOUGH_INFO
	// Evidence are the sentences the verdict rests on: at least one for
	// SUPPORTS and REFUTES, none for NOT_ENOUGH_INFO.
	Evidence []Evidence `json:"evidence"`
	// ModelVerdict is the generator's own verdict ("" when its reply was not
	// a verdict); Note says why Verdict differs from it, or why cited
	// sentences were set aside.
	ModelVerdict string `json:"model_verdict"`
	Note         string `json:"note,omitempty"`
	// DroppedEvidence are sentence numbers the generator cited that it had
	// not been shown.
	DroppedEvidence []int `json:"dropped_evidence,omitempty"`
	// Sources are the ids of the results whose sentences the generator read,
	// best first; SentencesShown how many sentences of them it read.
	Sources        []string           `json:"sources"`
	SentencesShown int                `json:"sentences_shown"`
	Model          string             `json:"model"`
	TimingsMS      map[string]float64 `json:"timings_ms"` // retrieve, generate, total
	Retrieval      *RetrieveResponse  `json:"retrieval"`
}

// Evidence is one sentence a verdict rests on.
type Evidence struct {
	ID    string `json:"id"` // the document: one of the response's sources
	Title string `json:"title"`
	// Sentence is the sentence's place in the document's text, from 0, the
	// text split after ". ", "! " and "? " (FEVER's evidence counts so).
	Sentence int    `json:"sentence"`
	Text     string `json:"text"`   // the sentence, quoted from the document
	Number   int    `json:"number"` // its number in what the generator was shown
}

// Verify retrieves for a claim and has the server's generator give a
// verdict (POST /v1/verify).
func (c *Client) Verify(ctx context.Context, req *VerifyRequest) (*VerifyResponse, error) {
	var out VerifyResponse
	if err := c.Do(ctx, http.MethodPost, "/v1/verify", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// WriteVerdict prints a verdict as dmar verify does: the verdict, each
// quoted sentence with its document, the note and the timings.
func WriteVerdict(w io.Writer, res *VerifyResponse) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", res.Verdict)
	for _, e := range res.Evidence {
		fmt.Fprintf(&b, "  [%s %s, sentence %d] %s\n", e.ID, e.Title, e.Sentence, e.Text)
	}
	if res.Note != "" {
		fmt.Fprintf(&b, "  (%s)\n", res.Note)
	}
	if len(res.DroppedEvidence) > 0 {
		fmt.Fprintf(&b, "  (dropped sentence numbers the model was not shown: %v)\n", res.DroppedEvidence)
	}
	fmt.Fprintf(&b, "(%s read %d sentences of %s; retrieval %.0f ms, verdict %.0f ms)\n", res.Model, res.SentencesShown,
		strings.Join(res.Sources, ", "), res.TimingsMS["retrieve"], res.TimingsMS["generate"])
	_, err := io.WriteString(w, b.String())
	return err
}
