package server_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/answer"
	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/chat"
	"github.com/dmar-kg/dmar/internal/server"
)

// fakeChat is an OpenAI-compatible endpoint that cites the first source
// shown and one id it was not shown, in one body or as a stream. The real
// model is exercised by cmd/dmar's TestLLM* tests.
func fakeChat(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream   bool           `json:"stream"`
			Messages []chat.Message `json:"messages"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		user := req.Messages[len(req.Messages)-1].Content
		first := strings.TrimPrefix(strings.SplitN(strings.SplitN(user, "\n", 3)[1], "]", 2)[0], "[")
		reply := "Christopher Nolan [" + first + "] [Q999999]"
		if !req.Stream {
			fmt.Fprintf(w, `{"choices":[{"message":{"content":%q}}]}`, reply)
			return
		}
		for _, piece := range strings.SplitAfter(reply, " ") {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", piece)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func answerRouter(t *testing.T, baseURL string) http.Handler {
	p, _ := testPipeline(t)
	a := answer.New(answer.Config{Generator: chat.Client{BaseURL: baseURL, Model: "m"}})
	return server.New(server.Config{Pipeline: p, Answerer: a, AnswerModel: "m"})
}

func TestAnswer(t *testing.T) {
	h := answerRouter(t, fakeChat(t).URL)
	w := do(t, h, "POST", "/v1/answer", `{"query": "Who directed Inception?", "k": 4}`)
	if w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var res api.AnswerResponse
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.Retrieval == nil || len(res.Retrieval.Results) != 4 || len(res.Sources) != 3 {
		t.Fatalf("retrieval %+v, sources %v", res.Retrieval, res.Sources)
	}
	top := res.Retrieval.Results[0].ID
	if !slices.Equal(res.Citations, []string{top}) || !slices.Equal(res.DroppedCitations, []string{"Q999999"}) ||
		res.Answer != "Christopher Nolan ["+top+"]" || res.Model != "m" || res.TimingsMS["generate"] <= 0 {
		t.Errorf("answer %q, citations %v, dropped %v, model %q, timings %v", res.Answer, res.Citations, res.DroppedCitations, res.Model, res.TimingsMS)
	}
	if res.Retrieval.Options.K != 4 {
		t.Errorf("retrieve options not applied: k = %d", res.Retrieval.Options.K)
	}
}

func TestAnswerStream(t *testing.T) {
	h := answerRouter(t, fakeChat(t).URL)
	w := do(t, h, "POST", "/v1/answer", `{"query": "Who directed Inception?", "stream": true}`)
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, type %q: %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	var events []string
	var deltas strings.Builder
	var final api.AnswerResponse
	sc := bufio.NewScanner(w.Body)
	sc.Buffer(nil, 1<<22)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
			events = append(events, e)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			switch event {
			case api.EventDelta:
				var x api.AnswerDelta
				_ = json.Unmarshal([]byte(d), &x)
				deltas.WriteString(x.Text)
			case api.EventAnswer:
				_ = json.Unmarshal([]byte(d), &final)
			}
		}
	}
	if len(events) < 3 || events[0] != api.EventRetrieval || events[len(events)-1] != api.EventAnswer {
		t.Fatalf("events %v", events)
	}
	if !strings.Contains(deltas.String(), "[Q999999]") || strings.Contains(final.Answer, "Q999999") || len(final.Citations) != 1 || final.Retrieval != nil {
		t.Errorf("deltas %q, final %+v", deltas.String(), final)
	}
}

func TestAnswerUnavailable(t *testing.T) {
	// No generator configured.
	w := do(t, router(t), "POST", "/v1/answer", `{"query": "Who directed Inception?"}`)
	if w.Code != 503 || !strings.Contains(w.Body.String(), "--chat-url") || w.Header().Get("Retry-After") == "" {
		t.Errorf("unconfigured: status %d: %s", w.Code, w.Body)
	}
	// A generator that is down, streaming or not: 503 before anything is sent.
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	h := answerRouter(t, url)
	for _, body := range []string{`{"query": "Who directed Inception?"}`, `{"query": "Who directed Inception?", "stream": true}`} {
		w := do(t, h, "POST", "/v1/answer", body)
		if w.Code != 503 || !strings.Contains(w.Body.String(), "generator is unavailable") {
			t.Errorf("%s: status %d: %s", body, w.Code, w.Body)
		}
	}
	// Bad input is refused as on /v1/retrieve.
	w = do(t, h, "POST", "/v1/answer", `{"query": "x", "stream": "yes"}`)
	if w.Code != 400 || !strings.Contains(w.Body.String(), "stream") {
		t.Errorf("bad stream: status %d: %s", w.Code, w.Body)
	}
}

// The Go client reads both forms of the answer.
func TestAnswerClient(t *testing.T) {
	srv := httptest.NewServer(answerRouter(t, fakeChat(t).URL))
	defer srv.Close()
	c, err := api.NewClient(srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := &api.AnswerRequest{RetrieveRequest: api.RetrieveRequest{Query: "Who directed Inception?", K: api.Ptr(3)}}
	one, err := c.Answer(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var pieces []string
	st, err := c.AnswerStream(t.Context(), req, func(d string) { pieces = append(pieces, d) })
	if err != nil {
		t.Fatal(err)
	}
	if one.Answer == "" || one.Answer != st.Answer || !slices.Equal(one.Citations, st.Citations) || st.Retrieval == nil ||
		len(st.Retrieval.Results) != 3 || len(pieces) < 2 {
		t.Errorf("one %+v\nstream %+v, %d pieces", one, st, len(pieces))
	}
	// A server without a generator: the client's error carries the 503.
	plain := httptest.NewServer(router(t))
	defer plain.Close()
	c2, _ := api.NewClient(plain.URL, nil)
	for _, call := range []func() error{
		func() error { _, err := c2.Answer(t.Context(), req); return err },
		func() error { _, err := c2.AnswerStream(t.Context(), req, nil); return err },
	} {
		var e *api.Error
		if err := call(); !errors.As(err, &e) || e.StatusCode != 503 || e.Code != api.CodeUnavailable {
			t.Errorf("no generator: %v", err)
		}
	}
}
