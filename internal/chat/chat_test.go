package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/chat/chattest"
	"github.com/dmar-kg/dmar/internal/testfile"
)

func TestComplete(t *testing.T) {
	srv := chattest.New(t, "<think>x</think> hello ")
	c := Client{BaseURL: srv.URL + "/v1/", Model: "m", APIKey: "k"}
	out, err := c.Complete(context.Background(), []Message{{Role: "user", Content: "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	got := srv.Last()
	if StripThinking(out) != "hello" || got.Authorization != "Bearer k" || got.Model != "m" || got.Temperature == nil || *got.Temperature != 0 ||
		len(got.Messages) != 1 || got.Messages[0].Content != "hi" {
		t.Errorf("out %q, request %+v", out, got)
	}
}

func TestCompleteErrors(t *testing.T) {
	for _, c := range []struct {
		name, body string
		status     int
		want       string
		unexpected bool
	}{
		{"status", `{}`, 500, "endpoint answered 500 Internal Server Error", false},
		{"not JSON", `nope`, 200, "decode response: ", true},
		{"no choices", `{"choices":[]}`, 200, "response has no choices", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(c.status)
				w.Write([]byte(c.body))
			}))
			defer srv.Close()
			_, err := Client{BaseURL: srv.URL, Model: "m"}.Complete(context.Background(), nil)
			if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, ErrUnexpectedResponse) != c.unexpected {
				t.Errorf("error %v, want %q (unexpected response: %v)", err, c.want, c.unexpected)
			}
			var se *StatusError
			if errors.As(err, &se) != (c.status != 200) {
				t.Errorf("error %v: StatusError %v", err, se)
			}
		})
	}
}

func TestCompleteTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(time.Second):
		}
	}))
	defer srv.Close()
	start := time.Now()
	_, err := Client{BaseURL: srv.URL, Model: "m", Timeout: 50 * time.Millisecond}.Complete(context.Background(), nil)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 900*time.Millisecond {
		t.Errorf("error %v after %v, want a deadline", err, time.Since(start))
	}
}

// TestStreamLlamaCpp replays a stream llama.cpp's server (xllamacpp, the
// 0.5B model of scripts/services/llm.sh) sent: the deltas arrive in order and
// join into the reply; the role-only first event and the empty last one add
// nothing.
func TestStreamLlamaCpp(t *testing.T) {
	raw := testfile.Read(t, "testdata/llamacpp-stream.txt")
	var got struct {
		Stream    bool `json:"stream"`
		MaxTokens int  `json:"max_tokens"`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(raw)
	}))
	defer srv.Close()
	var deltas []string
	out, err := Client{BaseURL: srv.URL, Model: "m", MaxTokens: 16}.Stream(context.Background(), nil, func(d string) error {
		deltas = append(deltas, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Stream || got.MaxTokens != 16 {
		t.Errorf("request %+v, want stream and max_tokens 16", got)
	}
	if len(deltas) < 3 || strings.Join(deltas, "") != out || !strings.Contains(out, "Paris") || !strings.Contains(out, "Rome") {
		t.Errorf("deltas %q, reply %q", deltas, out)
	}
}

func TestStreamStopsOnCallbackError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		for _, d := range []string{"a", "b", "c"} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", d)
		}
		w.Write([]byte("data: [DONE]\n\n"))
	}))
	defer srv.Close()
	stop := errors.New("client went away")
	n := 0
	out, err := Client{BaseURL: srv.URL, Model: "m"}.Stream(context.Background(), nil, func(string) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || out != "ab" {
		t.Errorf("reply %q, error %v; want \"ab\" and the callback's error", out, err)
	}
}

func TestStreamBadEvent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("data: {nope\n\n"))
	}))
	defer srv.Close()
	_, err := Client{BaseURL: srv.URL, Model: "m"}.Stream(context.Background(), nil, func(string) error { return nil })
	if !errors.Is(err, ErrUnexpectedResponse) {
		t.Errorf("error %v, want ErrUnexpectedResponse", err)
	}
}

// CompleteSchema sends the schema as OpenAI's response_format (llama.cpp's
// server reads the same field), and Complete sends none.
func TestCompleteSchemaSendsResponseFormat(t *testing.T) {
	var bodies []map[string]json.RawMessage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]json.RawMessage
		_ = json.NewDecoder(r.Body).Decode(&b)
		bodies = append(bodies, b)
		w.Write([]byte(`{"choices":[{"message":{"content":"{\"verdict\":\"SUPPORTS\"}"}}]}`))
	}))
	defer srv.Close()
	c := Client{BaseURL: srv.URL, Model: "m"}
	schema := json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string"}}}`)
	out, err := c.CompleteSchema(context.Background(), []Message{{Role: "user", Content: "x"}}, Schema{Name: "verdict", Schema: schema})
	if err != nil || out != `{"verdict":"SUPPORTS"}` {
		t.Fatalf("reply %q, %v", out, err)
	}
	if _, err := c.Complete(context.Background(), []Message{{Role: "user", Content: "x"}}); err != nil {
		t.Fatal(err)
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string          `json:"name"`
			Strict bool            `json:"strict"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(bodies[0]["response_format"], &rf); err != nil {
		t.Fatalf("response_format %s: %v", bodies[0]["response_format"], err)
	}
	if rf.Type != "json_schema" || rf.JSONSchema.Name != "verdict" || !rf.JSONSchema.Strict || string(rf.JSONSchema.Schema) != string(schema) {
		t.Errorf("response_format %+v", rf)
	}
	if _, ok := bodies[1]["response_format"]; ok {
		t.Errorf("Complete sent a response_format: %s", bodies[1]["response_format"])
	}
}
