package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

// dmar bench latency times the question-aware DMAR beside plain hybrid
// search and the paper's DMAR in one run, and states the default request's
// ratio to hybrid in one line, with no targets of earlier rounds.
func TestBenchLatencyHasTheQuestionAwareRow(t *testing.T) {
	onnxtest.NeedEncoders(t, "")
	data, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Skip(err)
	}
	qs, err := datapath.Dataset("kgqa")
	if err != nil {
		t.Skip(err)
	}
	var out, errOut bytes.Buffer
	args := []string{"bench", "latency", "--data", data, "--questions", qs + "/dev.jsonl", "--limit", "2"}
	if err := Run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("bench latency: %v (%s)", err, errOut.String())
	}
	for _, row := range []string{"hybrid search", "DMAR exact", "DMAR Monte Carlo T=50", "DMAR question-aware"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(row) + `.*?  [0-9]+\.[0-9]  +[0-9]+\.[0-9]  `).MatchString(out.String()) {
			t.Errorf("no timed row %q in:\n%s", row, out.String())
		}
	}
	if !regexp.MustCompile(`(?m)^default p50 / hybrid p50 = \d+\.\d{2}x$`).MatchString(out.String()) ||
		!strings.Contains(out.String(), "question-aware: context linking, hybrid stage 1") {
		t.Errorf("no default ratio or parts line in:\n%s", out.String())
	}
	if strings.Contains(out.String(), "target") {
		t.Errorf("a target of an earlier round is printed:\n%s", out.String())
	}
}
