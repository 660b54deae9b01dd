package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/verify"
)

// dmar verify runs on Neo4j and Weaviate (the instances scripts/test.sh
// started) with the real small model (DMAR_CHAT_URL): a verdict in one of
// the three labels, evidence quoted from the documents Weaviate returned,
// the retrieval explained, no backend fallback.
func TestVerifyOnNeo4jAndWeaviate(t *testing.T) {
	chatURL := os.Getenv("DMAR_CHAT_URL")
	if chatURL == "" {
		t.Skip("DMAR_CHAT_URL is not set: start the model with scripts/services.sh start llm (scripts/test.sh does)")
	}
	nuri, wurl, film, run := realBackends(t)
	run("load", "neo4j", "--uri", nuri, "--bundle", film)
	graph := "neo4j://" + strings.TrimPrefix(nuri, "bolt://")
	index := "weaviate://" + strings.TrimPrefix(strings.TrimPrefix(wurl, "http://"), "https://") + "/VerifyFilmTest"
	if g := os.Getenv("DMAR_WEAVIATE_GRPC"); g != "" { // an instance off the default gRPC port (as internal/retrieval/weaviate's tests read it)
		index += "?grpc=" + url.QueryEscape(g)
	}
	dropClass(t, wurl, "VerifyFilmTest")
	run("load", "corpus", "--data", film, "--index", index, "--quiet")
	resp, err := http.Get(strings.TrimRight(chatURL, "/") + "/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct{ Data []struct{ ID string } }
	err = json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if err != nil || len(models.Data) == 0 {
		t.Fatalf("%s/models: %v", chatURL, err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"verify", "--data", film, "--graph", graph, "--index", index, "--chat-url", chatURL, "--chat-model", models.Data[0].ID,
		"--json", "--timeout", "5m", "-o", "k=3", "Inception was directed by Christopher Nolan."}
	if err := Run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("dmar verify: %v\n%s", err, stderr.String())
	}
	var res api.VerifyResponse
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("dmar verify --json: %v\n%s", err, stdout.String())
	}
	if !slices.Contains([]string{api.VerdictSupports, api.VerdictRefutes, api.VerdictNotEnoughInfo}, res.Verdict) ||
		res.Retrieval == nil || len(res.Retrieval.Results) == 0 || len(res.Sources) == 0 {
		t.Fatalf("verdict %q, %+v", res.Verdict, res)
	}
	for _, f := range res.Retrieval.Fallbacks {
		if strings.HasSuffix(f.Name, "_unavailable") && f.Name != "gate_unavailable" && f.Name != "gnn_unavailable" {
			t.Errorf("backend fallback %+v", f)
		}
	}
	texts := map[string]string{}
	for _, d := range res.Retrieval.Results {
		texts[d.ID] = d.Text
		if d.Breakdown.Explain == "" {
			t.Errorf("result %s has no explanation", d.ID)
		}
	}
	for _, e := range res.Evidence {
		s := verify.Sentences(texts[e.ID])
		if !slices.Contains(res.Sources, e.ID) || e.Sentence >= len(s) || strings.TrimSpace(s[e.Sentence]) != e.Text {
			t.Errorf("quote %q is not sentence %d of retrieved document %s", e.Text, e.Sentence, e.ID)
		}
	}
	t.Logf("%s (model %s), evidence %+v, %d sentences of %v, %.0f ms", res.Verdict, res.ModelVerdict, res.Evidence, res.SentencesShown, res.Sources, res.TimingsMS["total"])
}
