package api

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// OptionList collects repeated -o name=value flags.
type OptionList []string

func (o *OptionList) String() string     { return strings.Join(*o, ",") }
func (o *OptionList) Set(s string) error { *o = append(*o, s); return nil }

// RequestFlags are the flags dmar query, ask and verify share.
type RequestFlags struct {
	JSON    bool
	Server  string
	Options OptionList
	timeout *time.Duration // --timeout, when registered
}

// Register adds --json (the JSON that POST route answers), --server and
// the repeatable -o to fs, and --timeout when what names the generated
// part (dmar ask, verify).
func (f *RequestFlags) Register(fs *flag.FlagSet, route, what string) {
	if what != "" {
		f.timeout = fs.Duration("timeout", 2*time.Minute, "time limit of the retrieval and the "+what+" together")
	}
	fs.BoolVar(&f.JSON, "json", false, "print the same JSON as POST "+route)
	fs.StringVar(&f.Server, "server", "", "ask the dmar server at this URL (http://HOST:PORT) instead of building a local pipeline; its API key, if it needs one, from env DMAR_API_KEY")
	fs.Var(&f.Options, "o", "a retrieval option as name=value, repeatable (e.g. -o k=10 -o shapley=montecarlo); names as in the API")
}

// Limit is ctx within --timeout, and the limit of a server's answer on
// the HTTP client: none when --timeout bounds ctx, else 5 minutes.
func (f RequestFlags) Limit(ctx context.Context) (context.Context, context.CancelFunc, time.Duration) {
	if f.timeout == nil {
		return ctx, func() {}, 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, *f.timeout)
	return ctx, cancel, 0
}

// RawRequest builds a request body exactly as the API receives it from
// dmar query and dmar ask: the query and each option "name=value" (a JSON
// value, else a string), so that the server, or a local pipeline, checks
// it as it checks any request.
func RawRequest(query string, options []string) ([]byte, error) {
	return rawBody("query", query, options)
}

// RawVerifyRequest is RawRequest for POST /v1/verify: the claim in "claim".
func RawVerifyRequest(claim string, options []string) ([]byte, error) {
	return rawBody("claim", claim, options)
}

func rawBody(field, text string, options []string) ([]byte, error) {
	body := map[string]json.RawMessage{}
	q, _ := json.Marshal(text)
	body[field] = q
	for _, kv := range options {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("-o %q: want name=value", kv)
		}
		raw := json.RawMessage(val)
		if !json.Valid(raw) {
			raw, _ = json.Marshal(val)
		}
		body[name] = raw
	}
	return json.Marshal(body)
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteAnswer prints an answer as dmar ask does: the answer, then each
// cited document's title, the dropped citations and the timings.
func WriteAnswer(w io.Writer, res *AnswerResponse) error {
	titles := map[string]string{}
	if res.Retrieval != nil {
		for _, d := range res.Retrieval.Results {
			titles[d.ID] = d.Title
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", res.Answer)
	for _, id := range res.Citations {
		fmt.Fprintf(&b, "  [%s] %s\n", id, titles[id])
	}
	if len(res.DroppedCitations) > 0 {
		fmt.Fprintf(&b, "  (dropped citations of documents the model was not shown: %s)\n", strings.Join(res.DroppedCitations, ", "))
	}
	fmt.Fprintf(&b, "(%s; retrieval %.0f ms, answer %.0f ms)\n", res.Model, res.TimingsMS["retrieve"], res.TimingsMS["generate"])
	_, err := io.WriteString(w, b.String())
	return err
}
