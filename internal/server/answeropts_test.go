package server_test

import (
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/answer"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/server"
)

// The answer's own options: defaults, bounds named by field, wrong types refused.
func TestDecodeAnswerOptions(t *testing.T) {
	req, err := server.DecodeAnswer(strings.NewReader(`{"query": "who directed Inception?"}`), pipeline.Defaults())
	if err != nil || req.EvidenceTokens != answer.DefaultEvidenceTokens || !req.GraphAnswer {
		t.Fatalf("defaults: %+v %v", req, err)
	}
	req, err = server.DecodeAnswer(strings.NewReader(`{"query": "q", "evidence_tokens": 160, "graph_answer": false}`), pipeline.Defaults())
	if err != nil || req.EvidenceTokens != 160 || req.GraphAnswer {
		t.Fatalf("set: %+v %v", req, err)
	}
	for _, body := range []string{
		`{"query": "q", "evidence_tokens": -1}`,
		`{"query": "q", "evidence_tokens": 2001}`,
		`{"query": "q", "evidence_tokens": "many"}`,
		`{"query": "q", "graph_answer": "yes"}`,
		`{"query": "   ", "evidence_tokens": 10}`,
	} {
		_, err := server.DecodeAnswer(strings.NewReader(body), pipeline.Defaults())
		e, ok := errs.As(err)
		if !ok || e.Code != errs.Invalid || e.Field == "" {
			t.Errorf("%s: %v, want a 400 naming the field", body, err)
		}
	}
}
