package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/answer"
	"github.com/dmar-kg/dmar/internal/chat/chattest"
	"github.com/dmar-kg/dmar/internal/verify"
)

func TestReaderAnswersAndScores(t *testing.T) {
	srv := chattest.New(t, "<think>hmm</think>\nThe Christopher Nolan\nextra")
	rd := &Reader{BaseURL: srv.URL + "/v1", Model: "m"}
	q := Question{Question: "who directed inception", Answers: []string{"Christopher Nolan"}}
	rec := Record{Metrics: map[string]float64{}}
	docs := []answer.Source{{ID: "Q1", Title: "Inception", Text: "A film by Nolan."}, {ID: "Q2", Text: "other"}, {ID: "Q3", Text: "third"}, {ID: "Q4", Text: "fourth"}}
	readerMetrics(context.Background(), Config{Reader: rd, ReaderK: 1}, q, docs, &rec)
	if rec.Prediction != "The Christopher Nolan" || rec.Metrics["em"] != 1 || rec.Metrics["f1"] != 1 {
		t.Fatalf("prediction %q, metrics %v, error %q", rec.Prediction, rec.Metrics, rec.Error)
	}
	// The answer path's prompt, as POST /v1/answer sends it (EvidenceTokens
	// 0: the first three documents' heads).
	want := answer.Messages(q.Question, []answer.Source{docs[0], docs[1], docs[2]})
	got := srv.Last()
	user := got.Messages[len(got.Messages)-1].Content
	if got.Model != "m" || len(got.Messages) != len(want) || got.Messages[0].Content != answer.SystemPrompt || user != want[len(want)-1].Content || strings.Contains(user, "fourth") {
		t.Errorf("request: model %q, user message %q", got.Model, user)
	}
}

func TestReaderErrors(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }))
	defer down.Close()
	for _, q := range []Question{{Question: "q", Answers: []string{"a"}}, {Question: "c", Label: LabelRefutes}} {
		rec := Record{Metrics: map[string]float64{}}
		readerMetrics(context.Background(), Config{Reader: &Reader{BaseURL: down.URL, Model: "m"}, ReaderK: 5}, q, answerDocs(passageDocs("A passage.")), &rec)
		if len(rec.Metrics) != 0 || rec.Error == "" {
			t.Errorf("%q: a failed reader must leave the metrics absent and record the error: %v %q", q.Question, rec.Metrics, rec.Error)
		}
	}
}

func answerDocs(vs []verify.Source) []answer.Source {
	out := make([]answer.Source, len(vs))
	for i, v := range vs {
		out[i] = answer.Source{ID: v.ID, Title: v.Title, Text: v.Text}
	}
	return out
}

// passageDocs are documents with the given texts, ids d1, d2, ...
func passageDocs(texts ...string) []verify.Source {
	out := make([]verify.Source, len(texts))
	for i, t := range texts {
		out[i] = verify.Source{ID: fmt.Sprintf("d%d", i+1), Text: t}
	}
	return out
}

// A claim goes through the verification path in one call: the verdict
// gives the label accuracy, the sentences read and cited FEVER's strict
// scores; the reply follows the verdict's schema.
func TestClaimMetrics(t *testing.T) {
	var reply string
	var got map[string]json.RawMessage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		b, _ := json.Marshal(reply)
		w.Write([]byte(`{"choices":[{"message":{"content":` + string(b) + `}}]}`))
	}))
	defer srv.Close()
	docs := []verify.Source{
		{ID: "Q1", Title: "Magic Johnson", Text: "Magic Johnson is a retired player. He played for the Lakers. He was born in 1959."},
		{ID: "Q2", Title: "Lakers", Text: "The Lakers are a basketball team."},
	}
	gold := [][]Evidence{{{Doc: "Q1", Sentence: 1}}, {{Doc: "Q1", Sentence: 2}, {Doc: "Q9", Sentence: 0}}}
	for _, c := range []struct {
		name, reply, label string
		evidence           [][]Evidence
		want               map[string]float64
		pred               string
	}{
		{"right, cites the gold set", `{"evidence": [2], "verdict": "REFUTES"}`, LabelRefutes, gold,
			map[string]float64{"label_acc": 1, "fever_score": 1, "fever_score_cited": 1}, "REFUTES"},
		{"right, cites another sentence", `{"evidence": [1], "verdict": "REFUTES"}`, LabelRefutes, gold,
			map[string]float64{"label_acc": 1, "fever_score": 1, "fever_score_cited": 0}, "REFUTES"},
		{"right, the gold set was not read", `{"evidence": [1], "verdict": "REFUTES"}`, LabelRefutes, [][]Evidence{{{Doc: "Q9", Sentence: 0}}},
			map[string]float64{"label_acc": 1, "fever_score": 0, "fever_score_cited": 0}, "REFUTES"},
		{"wrong label", `{"evidence": [2], "verdict": "SUPPORTS"}`, LabelRefutes, gold,
			map[string]float64{"label_acc": 0, "fever_score": 0, "fever_score_cited": 0}, "SUPPORTS"},
		{"no evidence: not enough info", `{"evidence": [], "verdict": "SUPPORTS"}`, LabelNEI, nil,
			map[string]float64{"label_acc": 1, "fever_score": 1, "fever_score_cited": 1}, "NOT_ENOUGH_INFO"},
	} {
		t.Run(c.name, func(t *testing.T) {
			reply = c.reply
			rec := Record{Metrics: map[string]float64{}}
			q := Question{ID: "c", Question: "Magic Johnson did not play for the Lakers.", Label: c.label, Evidence: c.evidence}
			readerMetrics(context.Background(), Config{Reader: &Reader{BaseURL: srv.URL, Model: "m"}, ReaderK: 2, ReaderChars: 600}, q, answerDocs(docs), &rec)
			if !reflect.DeepEqual(rec.Metrics, c.want) || rec.Prediction != c.pred || rec.Error != "" {
				t.Errorf("metrics %v, prediction %q, error %q", rec.Metrics, rec.Prediction, rec.Error)
			}
			if _, ok := got["response_format"]; !ok {
				t.Errorf("the claim was not asked with the verdict's schema: %v", got)
			}
		})
	}
}

// A rerun is answered from the cache: same model and prompt, no call; a new
// model or a new prompt asks again.
func TestReaderCache(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls++
		w.Write([]byte(`{"choices":[{"message":{"content":"Christopher Nolan"}}]}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	q := Question{Question: "who directed inception", Answers: []string{"Christopher Nolan"}}
	ask := func(model string, texts ...string) Record {
		rec := Record{Metrics: map[string]float64{}}
		rd := &Reader{BaseURL: srv.URL, Model: model, Cache: dir}
		readerMetrics(context.Background(), Config{Reader: rd, ReaderK: 2}, q, answerDocs(passageDocs(texts...)), &rec)
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
	readerMetrics(context.Background(), Config{Reader: rd, ReaderK: 2}, q, answerDocs(passageDocs("Another passage.")), &Record{Metrics: map[string]float64{}})
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
