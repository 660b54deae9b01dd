package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/eval"
	"github.com/dmar-kg/dmar/internal/kg/neo4jkg/neo4jtest"
	"github.com/dmar-kg/dmar/internal/scoring/onnx/onnxtest"
)

// evalLine is the part of a per_question.jsonl line these tests read.
type evalLine struct {
	ID            string   `json:"id"`
	System        string   `json:"system"`
	RankedIDs     []string `json:"ranked_ids"`
	Error         string   `json:"error"`
	Fallbacks     []string `json:"fallbacks"`
	QueryEntities []string `json:"query_entities"`
	Anchors       []string `json:"anchors"`
}

func readEvalLines(t *testing.T, dir string) map[string]evalLine {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "per_question.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]evalLine{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var l evalLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("per_question.jsonl: %v", err)
		}
		out[l.System+"/"+l.ID] = l
	}
	return out
}

// dmar eval runs every system and ablation against Neo4j and Weaviate (the
// instances scripts/test.sh started) as it does on the embedded backends:
// the same questions, no errors and no backend fallbacks, the structural
// path running on Neo4j, and the same dense rankings as the embedded index
// (the vectors are the same; 244 documents are searched exactly).
func TestEvalOnNeo4jAndWeaviate(t *testing.T) {
	nuri, wurl, film, run := realBackends(t)
	onnxtest.NeedFile(t, filepath.Join(onnxtest.EncoderDir(), "manifest.json"), "the sentence encoder")
	kgqa, err := datapath.Dataset("kgqa")
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	// The film KG into Neo4j (idempotent; a superset already there is left
	// as it is) and the film corpus into a Weaviate class of this test's own.
	run("load", "neo4j", "--uri", nuri, "--bundle", film)
	graph := "neo4j://" + strings.TrimPrefix(nuri, "bolt://")
	index := "weaviate://" + strings.TrimPrefix(strings.TrimPrefix(wurl, "http://"), "https://") + "/EvalFilmTest"
	if g := os.Getenv("DMAR_WEAVIATE_GRPC"); g != "" {
		index += "?grpc=" + g // searches and imports go over gRPC: the same server's port
	}
	// The class is this test's own: drop what an earlier run left, which may
	// hold another encoder's vectors (dmar refuses to load into it).
	dropClass(t, wurl, "EvalFilmTest")
	run("load", "corpus", "--data", film, "--index", index, "--quiet")

	common := []string{"eval", "--data", film, "--quiet", "--limit", "60", "--skip-missing-gold",
		"--dataset", "kgqa:" + filepath.Join(kgqa, "dev.jsonl"), "--k-max", "10"}
	embOut, nwOut := filepath.Join(t.TempDir(), "emb"), filepath.Join(t.TempDir(), "nw")
	run(append(common, "--out", embOut)...)
	run(append(common, "--graph", graph, "--index", index, "--out", nwOut)...)

	emb, nw := readEvalLines(t, embOut), readEvalLines(t, nwOut)
	// --limit takes the first 60 questions; those whose gold documents are
	// not among the film corpus's 244 are dropped.
	if n := len(eval.SystemNames); len(nw) != len(emb) || len(nw)%n != 0 || len(nw) < 3*n {
		t.Fatalf("%d lines on Neo4j+Weaviate, %d embedded; want the same, %d systems x 3 questions or more", len(nw), len(emb), n)
	}
	structural := 0
	for key, l := range nw {
		e, ok := emb[key]
		switch {
		case !ok:
			t.Errorf("%s: not in the embedded run", key)
		case l.Error != "" || len(l.RankedIDs) == 0:
			t.Errorf("%s: error %q, %d results", key, l.Error, len(l.RankedIDs))
		case slices.ContainsFunc(l.Fallbacks, func(f string) bool {
			return strings.HasSuffix(f, "_unavailable") && f != "gate_unavailable" && f != "gnn_unavailable"
		}):
			t.Errorf("%s: backend fallback %v", key, l.Fallbacks)
		case l.System == "dense" && !slices.Equal(l.RankedIDs, e.RankedIDs):
			t.Errorf("%s: Weaviate ranks %v, the embedded index %v", key, l.RankedIDs, e.RankedIDs)
		}
		// dmar runs no structural path (docs/method.md); dmar-full does.
		if l.System == "dmar-full" && len(l.QueryEntities) > 0 && len(l.Anchors) > 0 {
			structural++
		}
	}
	if structural == 0 {
		t.Error("no question linked an entity on Neo4j: the structural path never ran")
	}
	rep, err := os.ReadFile(filepath.Join(nwOut, "report.md"))
	if err != nil || !strings.Contains(string(rep), "graph "+graph) || !strings.Contains(string(rep), "index "+index) {
		t.Errorf("report.md does not name the backends (%v):\n%.600s", err, rep)
	}

	// dmar bench latency times the same backends beside the embedded ones
	// in one run, cold then warm, and ends with their ratio.
	var out, errOut bytes.Buffer
	args := []string{"bench", "latency", "--data", film, "--questions", filepath.Join(kgqa, "dev.jsonl"), "--limit", "2", "--graph", graph, "--index", index}
	if err := Run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatalf("bench latency: %v (%s)", err, errOut.String())
	}
	got := out.String()
	if strings.Count(got, "remote p50 ms") != 2 || !strings.Contains(got, "remote: "+graph+" + "+index) ||
		!regexp.MustCompile(`(?m)^default request \(method dmar\) +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+x`).MatchString(got) ||
		!regexp.MustCompile(`(?m)^graph_neighbourhoods +[0-9.]+ +\d+ +[0-9.]+ +2$`).MatchString(got) ||
		!regexp.MustCompile(`\n\ndmar bench latency \(warm, default request p50 over 2 questions\): .* remote_ratio=[0-9]+\.[0-9]{2}\n$`).MatchString(got) {
		t.Errorf("bench latency does not time both backends, cold and warm, with the stages and the ratio:\n%s", got)
	}
}

// realBackends is the setup of the tests on the Neo4j and Weaviate that
// scripts/test.sh started: their URLs (the Neo4j held by this test process
// alone), the codexm-film bundle, and a runner of dmar commands that fails
// the test on an error. Without the services the test fails in CI and is
// skipped elsewhere.
func realBackends(t *testing.T) (nuri, wurl, film string, run func(args ...string)) {
	t.Helper()
	nuri, wurl = os.Getenv("DMAR_NEO4J_URI"), os.Getenv("DMAR_WEAVIATE_URL")
	if nuri == "" || wurl == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("DMAR_NEO4J_URI and DMAR_WEAVIATE_URL are unset in CI: scripts/test.sh starts both")
		}
		t.Skip("DMAR_NEO4J_URI/DMAR_WEAVIATE_URL unset: scripts/services.sh start neo4j weaviate and export both")
	}
	neo4jtest.Exclusive(t, nuri)
	onnxtest.NeedFile(t, onnxtest.Config().LibPath, "the ONNX Runtime library")
	film, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	run = func(args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := Run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("dmar %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
	}
	return nuri, wurl, film, run
}

// dropClass deletes a Weaviate class, if there is one.
func dropClass(t *testing.T, wurl, class string) {
	t.Helper()
	drop, err := http.NewRequest(http.MethodDelete, strings.TrimSuffix(wurl, "/")+"/v1/schema/"+class, http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(drop)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
		t.Fatalf("dropping %s: %s", class, resp.Status)
	}
}
