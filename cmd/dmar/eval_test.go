package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/eval"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

func TestEvalUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--out", "x"}, "--dataset and --out are required"},
		{[]string{"eval", "--dataset", "trec:x", "--out", "x"}, "unknown format"},
		{[]string{"eval", "--dataset", "hotpotqa:../../internal/eval/testdata/hotpot", "--out", "x", "--systems", "bm25,colbert"}, "unknown system"},
		{[]string{"eval", "--dataset", "hotpotqa:x", "--out", "x", "--k-max", "0"}, "--k-max"},
	} {
		err := Run(context.Background(), c.args, &bytes.Buffer{}, &bytes.Buffer{})
		if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want a usage error containing %q", c.args, err, c.want)
		}
	}
}

// The whole command on a four-paragraph corpus over the codexm-film graph:
// every system runs and the outputs appear, the PNGs decode.
func TestEvalWritesReport(t *testing.T) {
	onnxtest.NeedFile(t, onnxtest.Config().LibPath, "the ONNX Runtime library")
	onnxtest.NeedFile(t, filepath.Join(onnxtest.EncoderDir(), "manifest.json"), "the sentence encoder")
	film, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	args := []string{"eval", "--data", film, "--state", t.TempDir(), "--gnn", "", "--gate", "", "--quiet",
		"--dataset", "hotpotqa:../../internal/eval/testdata/hotpot", "--k-max", "3", "--out", out}
	if err := Run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "| dmar-mc50 |") {
		t.Errorf("stdout lacks the results table:\n%s", stdout.String())
	}
	for _, name := range []string{"report.md", "results.json", "per_question.jsonl", "recall_at_k.png", "latency.png", "ablation_deltas.png"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.HasSuffix(name, ".png") {
			if _, err := png.Decode(bytes.NewReader(b)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	b, _ := os.ReadFile(filepath.Join(out, "per_question.jsonl"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if n := len(eval.SystemNames); len(lines) != 2*n {
		t.Fatalf("%d lines, want 2 questions x %d systems", len(lines), n)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var r struct {
			ID, System string
			RankedIDs  []string `json:"ranked_ids"`
			Error      string
			Fallbacks  []string
		}
		// kg-walk ranks nothing on a corpus whose IDs are titles, and says so.
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Error != "" || (len(r.RankedIDs) == 0 && !(r.System == "kg-walk" && slices.Contains(r.Fallbacks, "graph_recall_no_documents"))) {
			t.Errorf("line %s: %v", l, err)
		}
		seen[r.System] = true
	}
	for _, s := range []string{"bm25", "dense", "hybrid", "dmar"} {
		if !seen[s] {
			t.Errorf("no %s lines", s)
		}
	}
	var res struct {
		Models []string `json:"models"`
	}
	b, _ = os.ReadFile(filepath.Join(out, "results.json"))
	// encoder, relation encoder (path relevance), GNN, gate, evidence gate (gate=evidence only), ranker (final_rank learned)
	if err := json.Unmarshal(b, &res); err != nil || len(res.Models) != 6 || !strings.Contains(res.Models[1], "relation encoder") || !strings.Contains(res.Models[2], "no GNN") || !strings.Contains(res.Models[4], "evidence gate") || !strings.Contains(res.Models[5], "ranker") {
		t.Errorf("models in use: %v (%v)", res.Models, err)
	}
}

func TestEvalSkipMissingGold(t *testing.T) {
	onnxtest.NeedFile(t, onnxtest.Config().LibPath, "the ONNX Runtime library")
	onnxtest.NeedFile(t, filepath.Join(onnxtest.EncoderDir(), "manifest.json"), "the sentence encoder")
	film, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.jsonl")
	if err := os.WriteFile(corpus, []byte(`{"id":"Q25191","title":"Christopher Nolan","text":"Christopher Nolan directed Inception."}`+"\n"+`{"id":"Q25188","title":"Inception","text":"Inception is a 2010 film."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	qs := filepath.Join(dir, "q.jsonl")
	if err := os.WriteFile(qs, []byte(`{"id":"a","question":"who directed inception","answers":["Christopher Nolan"],"gold_doc_ids":["Q25191"]}`+"\n"+`{"id":"b","question":"who scored inception","answers":["Hans Zimmer"],"gold_doc_ids":["Q76364"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	args := []string{"eval", "--kg", film, "--corpus", corpus, "--state", filepath.Join(dir, "state"), "--gnn", "", "--gate", "", "--quiet",
		"--dataset", "jsonl:" + qs, "--systems", "bm25,dmar", "--k-max", "2", "--out", out, "--skip-missing-gold"}
	var stdout, stderr bytes.Buffer
	if err := Run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr.String())
	}
	b, _ := os.ReadFile(filepath.Join(out, "per_question.jsonl"))
	if n := strings.Count(string(b), "\n"); n != 2 || strings.Contains(string(b), `"id":"b"`) {
		t.Errorf("want question a only, for 2 systems:\n%s", b)
	}
	rep, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(rep), "1 questions were dropped") {
		t.Errorf("report does not say a question was dropped:\n%s", rep)
	}
}
