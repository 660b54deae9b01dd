package eval

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReaderAnswersAndScores(t *testing.T) {
	var got struct {
		Model    string `json:"model"`
		Messages []struct{ Role, Content string }
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		json.NewDecoder(r.Body).Decode(&got)
		w.Write([]byte(`{"choices":[{"message":{"content":"<think>hmm</think>\nThe Christopher Nolan\nextra"}}]}`))
	}))
	defer srv.Close()
	rd := &Reader{BaseURL: srv.URL + "/v1", Model: "m"}
	q := Question{Question: "who directed inception", Answers: []string{"Christopher Nolan"}}
	rec := Record{Metrics: map[string]float64{}}
	readerMetrics(context.Background(), Config{Reader: rd, ReaderK: 1}, q, []string{"Inception\nA film by Nolan.", "other"}, &rec)
	if rec.Prediction != "The Christopher Nolan" || rec.Metrics["em"] != 1 || rec.Metrics["f1"] != 1 {
		t.Fatalf("prediction %q, metrics %v, error %q", rec.Prediction, rec.Metrics, rec.Error)
	}
	user := got.Messages[1].Content
	if got.Model != "m" || got.Messages[0].Content != ReaderSystemPrompt || !strings.Contains(user, "[1] Inception") || strings.Contains(user, "other") {
		t.Errorf("request: model %q, user message %q", got.Model, user)
	}
}

func TestReaderLabelAndErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"choices":[{"message":{"content":"Refuted."}}]}`))
	}))
	defer srv.Close()
	rec := Record{Metrics: map[string]float64{}}
	readerMetrics(context.Background(), Config{Reader: &Reader{BaseURL: srv.URL, Model: "m"}, ReaderK: 5}, Question{Question: "c", Label: "REFUTES"}, nil, &rec)
	if rec.Metrics["label_acc"] != 1 {
		t.Errorf("label: %v %q", rec.Metrics, rec.Prediction)
	}
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	defer down.Close()
	rec = Record{Metrics: map[string]float64{}}
	readerMetrics(context.Background(), Config{Reader: &Reader{BaseURL: down.URL, Model: "m"}, ReaderK: 5}, Question{Question: "q", Answers: []string{"a"}}, nil, &rec)
	if _, ok := rec.Metrics["em"]; ok || rec.Error == "" {
		t.Errorf("a failed reader must leave EM absent and record the error: %v %q", rec.Metrics, rec.Error)
	}
}

// A rerun is answered from the cache: same model and prompt, no call; a new
// model or a new prompt asks again.
func TestReaderCache(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Write([]byte(`{"choices":[{"message":{"content":"Christopher Nolan"}}]}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	q := Question{Question: "who directed inception", Answers: []string{"Christopher Nolan"}}
	ask := func(model string, texts ...string) Record {
		rec := Record{Metrics: map[string]float64{}}
		rd := &Reader{BaseURL: srv.URL, Model: model, Cache: dir}
		readerMetrics(context.Background(), Config{Reader: rd, ReaderK: 2}, q, texts, &rec)
		return rec
	}
	first := ask("m", "Inception is a film by Nolan.")
	again := ask("m", "Inception is a film by Nolan.")
	if calls != 1 || again.Prediction != first.Prediction || again.Metrics["em"] != 1 {
		t.Fatalf("%d calls; first %+v, again %+v", calls, first, again)
	}
	ask("m2", "Inception is a film by Nolan.")
	ask("m", "Another passage.")
	if calls != 3 {
		t.Errorf("%d calls, want a call for the new model and one for the new prompt", calls)
	}
	rd := &Reader{BaseURL: srv.URL, Model: "m", Cache: dir}
	readerMetrics(context.Background(), Config{Reader: rd, ReaderK: 2}, q, []string{"Another passage."}, &Record{Metrics: map[string]float64{}})
	if st := rd.Stats(); st.CacheHits != 1 || st.Calls != 0 {
		t.Errorf("stats %+v, want one hit and no call", st)
	}
}

func TestClipPassage(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"a  short\npassage", 0, "a short passage"},
		{"a short passage", 100, "a short passage"},
		{"Inception is a 2010 film", 13, "Inception is ..."},
	} {
		if got := clipPassage(c.in, c.n); got != c.want {
			t.Errorf("clipPassage(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
