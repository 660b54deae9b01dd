package chat

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestComplete(t *testing.T) {
	var got struct {
		Model       string    `json:"model"`
		Temperature *float64  `json:"temperature"`
		Messages    []Message `json:"messages"`
	}
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		auth = r.Header.Get("Authorization")
		_ = json.NewDecoder(r.Body).Decode(&got)
		w.Write([]byte(`{"choices":[{"message":{"content":"<think>x</think> hello "}}]}`))
	}))
	defer srv.Close()
	c := Client{BaseURL: srv.URL + "/v1/", Model: "m", APIKey: "k"}
	out, err := c.Complete(context.Background(), []Message{{Role: "user", Content: "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if StripThinking(out) != "hello" || auth != "Bearer k" || got.Model != "m" || got.Temperature == nil || *got.Temperature != 0 ||
		len(got.Messages) != 1 || got.Messages[0].Content != "hi" {
		t.Errorf("out %q, auth %q, request %+v", out, auth, got)
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
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
