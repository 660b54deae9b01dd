package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/chat"
	"github.com/dmar-kg/dmar/internal/server"
	"github.com/dmar-kg/dmar/internal/verify"
)

// Without a generator POST /v1/verify refuses with 503 and says how to
// configure one, whatever the body.
func TestVerifyWithoutGenerator(t *testing.T) {
	h := router(t)
	for _, body := range []string{`{"claim": "Inception was directed by Christopher Nolan."}`, `{"claim": ""}`} {
		w := do(t, h, "POST", "/v1/verify", body)
		if w.Code != 503 || !strings.Contains(w.Body.String(), "no generator is configured") || w.Header().Get("Retry-After") == "" {
			t.Errorf("%s: status %d: %s", body, w.Code, w.Body)
		}
	}
}

// With a generator, a claim with nothing visible, a missing claim and a
// query instead of a claim are 400s naming the field, before any call.
func TestVerifyBadRequests(t *testing.T) {
	p, _ := testPipeline(t)
	// The generator is never reached: nothing listens at this address.
	v := verify.New(verify.Config{Generator: chat.Client{BaseURL: "http://127.0.0.1:1/v1", Model: "m"}})
	h := server.New(server.Config{Pipeline: p, Verifier: v})
	for body, field := range map[string]string{
		`{"claim": ""}`:              "claim",
		`{"claim": " \u200b\t "}`:    "claim",
		`{"k": 3}`:                   "claim",
		`{"query": "Inception"}`:     "query",
		`{"claim": "x", "k": "two"}`: "k",
	} {
		w := do(t, h, "POST", "/v1/verify", body)
		var e api.ErrorBody
		_ = json.Unmarshal(w.Body.Bytes(), &e)
		if w.Code != 400 || e.Error.Field != field {
			t.Errorf("%s: status %d, field %q: %s", body, w.Code, e.Error.Field, w.Body)
		}
	}
	w := do(t, h, "POST", "/v1/verify", `{"claim": "`+strings.Repeat("x", 2001)+`"}`)
	if w.Code != 413 {
		t.Errorf("long claim: status %d: %s", w.Code, w.Body)
	}
}

// The document's VerifyRequest is RetrieveRequest with the claim in the
// query's place; VerifyResponse and Evidence are the Go types' fields.
func TestOpenAPIVerifySchemas(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(server.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	props := func(name string) []string {
		var out []string
		for p := range doc.Components.Schemas[name].Properties {
			out = append(out, p)
		}
		sort.Strings(out)
		return out
	}
	want := []string{"claim"}
	for _, f := range jsonFields(reflect.TypeOf(api.RetrieveRequest{})) {
		if f != "query" {
			want = append(want, f)
		}
	}
	sort.Strings(want)
	if got := props("VerifyRequest"); !reflect.DeepEqual(got, want) {
		t.Errorf("VerifyRequest has %v, want %v", got, want)
	}
	if got, want := jsonFields(reflect.TypeOf(server.VerifyInput{})), want; !reflect.DeepEqual(got, want) {
		t.Errorf("the server decodes %v, the document has %v", got, want)
	}
	for name, v := range map[string]any{"VerifyResponse": api.VerifyResponse{}, "Evidence": api.Evidence{}} {
		if got, want := props(name), jsonFields(reflect.TypeOf(v)); !reflect.DeepEqual(got, want) {
			t.Errorf("%s has %v, the Go type has %v", name, got, want)
		}
	}
}

// TestLLMVerifyQuotesRetrievedSentences asks the real model (DMAR_CHAT_URL)
// about claims through the Go client: every verdict is one of the three,
// every quote is the named sentence of a retrieved document that the model
// read, and a verdict other than NOT_ENOUGH_INFO rests on evidence.
func TestLLMVerifyQuotesRetrievedSentences(t *testing.T) {
	srv := httptest.NewServer(llmRouter(t, chatURL(t)))
	defer srv.Close()
	c, err := api.NewClient(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, claim := range []string{
		"Inception was directed by Christopher Nolan.",
		"Christopher Nolan was born in Australia.",
		"Inception won the Nobel Prize in Physics.",
	} {
		res, err := c.Verify(context.Background(), &api.VerifyRequest{Claim: claim, Options: api.RetrieveRequest{K: api.Ptr(3)}})
		if err != nil {
			t.Fatalf("%q: %v", claim, err)
		}
		if !slices.Contains([]string{api.VerdictSupports, api.VerdictRefutes, api.VerdictNotEnoughInfo}, res.Verdict) {
			t.Errorf("%q: verdict %q", claim, res.Verdict)
		}
		if (res.Verdict == api.VerdictNotEnoughInfo) != (len(res.Evidence) == 0) {
			t.Errorf("%q: verdict %s with %d evidence sentences", claim, res.Verdict, len(res.Evidence))
		}
		if res.Retrieval == nil || len(res.Sources) == 0 || res.SentencesShown == 0 || res.Claim != claim {
			t.Fatalf("%q: %+v", claim, res)
		}
		texts := map[string]string{}
		for _, d := range res.Retrieval.Results {
			texts[d.ID] = d.Text
		}
		for _, e := range res.Evidence {
			text, ok := texts[e.ID]
			if !ok || !slices.Contains(res.Sources, e.ID) {
				t.Errorf("%q: evidence from %s, not a document the model read (%v)", claim, e.ID, res.Sources)
				continue
			}
			if s := verify.Sentences(text); e.Sentence >= len(s) || strings.TrimSpace(s[e.Sentence]) != e.Text || !strings.Contains(text, e.Text) {
				t.Errorf("%q: quote %q is not sentence %d of %s", claim, e.Text, e.Sentence, e.ID)
			}
		}
		t.Logf("%q: %s (model %s) %+v note %q, %d sentences of %v, generate %.0f ms", claim, res.Verdict, res.ModelVerdict,
			res.Evidence, res.Note, res.SentencesShown, res.Sources, res.TimingsMS["generate"])
	}
}

func FuzzDecodeVerify(f *testing.F) {
	seeds := append([]string{`{"claim": "Inception was directed by Christopher Nolan.", "k": 3}`, `{"claim": ""}`,
		`{"query": "x"}`, `{"claim": "x", "claim": "y"}`, `{"Claim": "x"}`}, retrieveSeeds...)
	fuzzDecode(f, seeds, withDefaults(server.DecodeVerify), func(t *testing.T, body []byte, req server.VerifyInput) {
		if len(body) > api.MaxBodyBytes || !json.Valid(bytes.TrimSpace(body)) || strings.TrimSpace(req.Claim) == "" {
			t.Fatalf("accepted a body that is too large, not JSON or without a claim: %q", body)
		}
	})
}
