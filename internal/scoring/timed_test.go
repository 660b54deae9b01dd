package scoring_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/scoring"
)

type inferenceLog struct{ models []string }

func (l *inferenceLog) Inference(model string, _ time.Duration) { l.models = append(l.models, model) }

type fixedQuestions struct{ err error }

func (q fixedQuestions) EncodeQuestion(context.Context, string) (scoring.EncodedQuestion, error) {
	return nil, q.err
}

// A question encoder's calls are timed as the encoder's, failed ones too;
// without a timer the encoder is returned as it is.
func TestTimedQuestions(t *testing.T) {
	log := &inferenceLog{}
	q := scoring.TimedQuestions(log, fixedQuestions{})
	for range 2 {
		if _, err := q.EncodeQuestion(context.Background(), "who directed Alien?"); err != nil {
			t.Fatal(err)
		}
	}
	failing := scoring.TimedQuestions(log, fixedQuestions{err: errors.New("model failed")})
	if _, err := failing.EncodeQuestion(context.Background(), "who directed Alien?"); err == nil {
		t.Fatal("the encoder's error was lost")
	}
	if len(log.models) != 3 || log.models[0] != "encoder" || log.models[2] != "encoder" {
		t.Errorf("recorded %q, want three encoder calls", log.models)
	}
	plain := fixedQuestions{}
	if got := scoring.TimedQuestions(struct{}{}, plain); got != scoring.QuestionEncoder(plain) {
		t.Error("without a timer the question encoder was wrapped")
	}
}
