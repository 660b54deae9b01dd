package server_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/answer"
	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/chat"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/reformulate"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/server"
	"github.com/dmar-kg/dmar/internal/verify"
)

// The tests below talk to a real model: the OpenAI-compatible endpoint in
// DMAR_CHAT_URL, which scripts/test.sh starts (scripts/services.sh start llm,
// the 0.5B model). On a shared 2-core machine one call takes 5-40 s, hence
// the generous limits.

const llmTimeout = 90 * time.Second

func chatURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("DMAR_CHAT_URL")
	if u == "" {
		t.Skip("DMAR_CHAT_URL is not set: start the model with scripts/services.sh start llm (scripts/test.sh does) and export its URL")
	}
	return u
}

// modelAt asks the endpoint which model it serves.
func modelAt(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(strings.TrimRight(base, "/") + "/models")
	if err != nil {
		t.Fatalf("the model server at %s does not answer: %v", base, err)
	}
	defer resp.Body.Close()
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Data) == 0 {
		t.Fatalf("%s/models: %v, %+v", base, err, out)
	}
	return out.Data[0].ID
}

// llmRouter serves the test pipeline with reformulator=chat and
// /v1/answer both on the model at base.
func llmRouter(t *testing.T, base string) http.Handler {
	t.Helper()
	testPipeline(t)
	model := modelAt(t, base)
	x := memindex.New(memindex.DefaultParams())
	if err := x.Put(context.Background(), testDocs); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.New(pipeline.Config{Graph: testGraph, Index: x, Encoder: letterEncoder{},
		Chat: reformulate.Chat{BaseURL: base, Model: model, Timeout: llmTimeout}})
	if err != nil {
		t.Fatal(err)
	}
	a := answer.New(answer.Config{Generator: chat.Client{BaseURL: base, Model: model, MaxTokens: answer.DefaultMaxTokens}})
	v := verify.New(verify.Config{Generator: chat.Client{BaseURL: base, Model: model, MaxTokens: verify.DefaultMaxTokens}})
	return server.New(server.Config{Pipeline: p, Answerer: a, AnswerModel: model, Verifier: v, RequestTimeout: 3 * llmTimeout})
}

func retrieveChat(t *testing.T, h http.Handler, query string) api.RetrieveResponse {
	t.Helper()
	w := do(t, h, "POST", "/v1/retrieve", `{"query": "`+query+`", "reformulator": "chat"}`)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var res api.RetrieveResponse
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestLLMReformulation(t *testing.T) {
	h := llmRouter(t, chatURL(t))
	const q = "Which films did Christopher Nolan direct?"
	res := retrieveChat(t, h, q)
	if res.Reformulator != "chat" || hasFallback(res, "reformulator_chat_failed") {
		t.Fatalf("reformulator %q, fallbacks %+v, Q' %q", res.Reformulator, res.Fallbacks, res.ReformulatedQuery)
	}
	// Clean passed it: one line, a query about Nolan, not the prompt's format.
	qq := res.ReformulatedQuery
	if qq == "" || strings.Contains(qq, "\n") || strings.Contains(qq, "[Evidence") || !strings.Contains(strings.ToLower(qq), "nolan") {
		t.Errorf("Q' = %q", qq)
	}
	t.Logf("Q' = %q (reformulate %.0f ms)", qq, res.TimingsMS["reformulate"])
}

func TestLLMAnswerCitesRetrievedDocuments(t *testing.T) {
	h := llmRouter(t, chatURL(t))
	w := do(t, h, "POST", "/v1/answer", `{"query": "Who directed Inception?"}`)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var res api.AnswerResponse
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Answer == "" || len(res.Citations) == 0 || res.Retrieval == nil {
		t.Fatalf("answer %q, citations %v", res.Answer, res.Citations)
	}
	var ids []string
	for _, d := range res.Retrieval.Results {
		ids = append(ids, d.ID)
	}
	for _, c := range res.Citations {
		if !slices.Contains(res.Sources, c) || !slices.Contains(ids, c) || !strings.Contains(res.Answer, "["+c) {
			t.Errorf("citation %s: not in sources %v / results %v / answer %q", c, res.Sources, ids, res.Answer)
		}
	}
	t.Logf("answer %q, citations %v, dropped %v, generate %.0f ms", res.Answer, res.Citations, res.DroppedCitations, res.TimingsMS["generate"])
}

// TestLLMFallbackAfterKill starts a second model server with the project's
// script, uses it, stops it, and checks that reformulator=chat falls back to
// the built-in reformulator (and says so) and that /v1/answer answers 503.
func TestLLMFallbackAfterKill(t *testing.T) {
	chatURL(t) // the model is installed and CI wants these tests
	script, err := filepath.Abs("../../scripts/services.sh")
	if err != nil {
		t.Fatal(err)
	}
	// A port of its own, chosen now: a fixed one fails wherever it is taken.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	env := append(os.Environ(), "DMAR_LLM_MODEL=0.5b", "DMAR_LLM_PORT="+port, "DMAR_LLM_THREADS=1")
	run := func(action string) string {
		cmd := exec.Command("bash", script, action, "llm")
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("services.sh %s llm: %v\n%s", action, err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		return lines[len(lines)-1]
	}
	base := run("start")
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			run("stop")
		}
	})
	if base != "http://127.0.0.1:"+port+"/v1" {
		t.Fatalf("start printed %q last, want the base URL", base)
	}
	h := llmRouter(t, base)
	const q = "Who directed Inception?"
	if res := retrieveChat(t, h, q); res.Reformulator != "chat" {
		t.Fatalf("with the server up: reformulator %q, fallbacks %+v", res.Reformulator, res.Fallbacks)
	}
	run("stop")
	stopped = true
	res := retrieveChat(t, h, q)
	if res.Reformulator != "builtin" || !hasFallback(res, "reformulator_chat_failed") {
		t.Errorf("after the kill: reformulator %q, fallbacks %+v", res.Reformulator, res.Fallbacks)
	}
	w := do(t, h, "POST", "/v1/answer", `{"query": "`+q+`"}`)
	if w.Code != 503 || !strings.Contains(w.Body.String(), "generator is unavailable") {
		t.Errorf("answer after the kill: status %d: %s", w.Code, w.Body)
	}
	w = do(t, h, "POST", "/v1/verify", `{"claim": "Inception was directed by Christopher Nolan."}`)
	if w.Code != 503 || !strings.Contains(w.Body.String(), "generator is unavailable") {
		t.Errorf("verify after the kill: status %d: %s", w.Code, w.Body)
	}
}

func hasFallback(res api.RetrieveResponse, name string) bool {
	return slices.ContainsFunc(res.Fallbacks, func(f api.Fallback) bool { return f.Name == name })
}
