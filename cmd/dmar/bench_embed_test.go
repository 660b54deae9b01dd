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

// dmar bench embed on real codexm documents ends with one
// "ENCODER docs_per_s=X" line per encoder, after a table holding the
// chunked baseline for the first encoder only.
func TestBenchEmbedEndsWithOneLinePerEncoder(t *testing.T) {
	second := "e5-small-v2-int8"
	onnxtest.NeedEncoders(t, "", second)
	data, err := datapath.Dataset("codexm")
	if err != nil {
		t.Skip(err)
	}
	var out, errOut bytes.Buffer
	args := []string{"bench", "embed", "--data", data, "--limit", "12", "--doc-tokens", "32", "--encoders", "all-MiniLM-L6-v2," + second}
	if err := Run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("bench embed: %v (%s)", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-2:]
	for i, name := range []string{"all-MiniLM-L6-v2", second} {
		if !regexp.MustCompile(`^` + regexp.QuoteMeta(name) + ` docs_per_s=[0-9]+\.[0-9]$`).MatchString(last[i]) {
			t.Errorf("line %q: want %q docs_per_s=X", last[i], name)
		}
	}
	if n := len(regexp.MustCompile(`(?m)^\S+ +chunked `).FindAllString(out.String(), -1)); n != 1 {
		t.Errorf("%d chunked rows, want 1 (the first encoder's baseline):\n%s", n, out.String())
	}
	if !strings.Contains(errOut.String(), "12/12 docs") {
		t.Errorf("progress %q: want the documents counted", errOut.String())
	}
}

func TestBenchEmbedRejectsUnknownEncoder(t *testing.T) {
	var out, errOut bytes.Buffer
	err := Run(context.Background(), []string{"bench", "embed", "--encoders", "all-MiniLM-L6-v2,nope"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "bge-small-en-v1.5") {
		t.Fatalf("error %v: want one naming the unknown encoder and the known ones", err)
	}
}
