package config_test

import (
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/config"
)

// Validation, serve, eval and every load command share these parsers.
func TestParseBackends(t *testing.T) {
	for _, raw := range []string{"", "embedded", "neo4j://h:7687", "neo4j+s://h", "bolt://127.0.0.1:7687", "bolt+s://h:7687"} {
		if _, err := config.ParseGraph(raw); err != nil {
			t.Errorf("ParseGraph(%q): %v", raw, err)
		}
	}
	for _, raw := range []string{"http://h:7474", "bolt+ssc://h", "neo4j:/nohost", "bolt://u:p@h", "h:7687"} {
		if _, err := config.ParseGraph(raw); err == nil || !strings.Contains(err.Error(), "want embedded or neo4j://HOST:PORT") {
			t.Errorf("ParseGraph(%q) = %v, want a refusal", raw, err)
		}
	}
	for _, raw := range []string{"embedded", "weaviate://h:8080/Doc", "weaviates://h/Doc", "http://h:8080/Doc", "https://h/Doc"} {
		if _, err := config.ParseIndex(raw); err != nil {
			t.Errorf("ParseIndex(%q): %v", raw, err)
		}
	}
	for _, raw := range []string{"bolt://h", "ftp://h/x", "weaviate:///Doc"} {
		if _, err := config.ParseIndex(raw); err == nil {
			t.Errorf("ParseIndex(%q) accepted", raw)
		}
	}
	b, _ := config.ParseGraph("bolt+s://h:7687")
	if b.Embedded() || b.Scheme != "bolt+s" {
		t.Errorf("ParseGraph(bolt+s) = %+v", b)
	}
	if b, _ := config.ParseGraph("embedded"); !b.Embedded() {
		t.Error("embedded is not embedded")
	}
}

// DMAR_GNN_MODEL and DMAR_GATE_MODEL are older names of DMAR_GNN and DMAR_GATE.
func TestModelAliases(t *testing.T) {
	env := map[string]string{"DMAR_GNN_MODEL": "/old/gnn.onnx", "DMAR_GATE_MODEL": "/old/gate.onnx", "DMAR_GATE": "/new/gate.onnx"}
	c := config.Default(t.TempDir(), "")
	if ps := config.Env(&c, func(k string) string { return env[k] }); len(ps) != 0 {
		t.Fatal(ps)
	}
	if c.Models.GNN != "/old/gnn.onnx" || c.Models.Gate != "/new/gate.onnx" {
		t.Errorf("gnn %q, gate %q; want the alias, then the setting's own name first", c.Models.GNN, c.Models.Gate)
	}
}

func TestCorpusFiles(t *testing.T) {
	for _, c := range []struct {
		data, corpus string
		want         []string
	}{
		{"/d", "", []string{"/d/corpus.jsonl"}},
		{"/d", "/x.jsonl", []string{"/x.jsonl"}},
		{"/d", "/x.jsonl, /nq/corpus.jsonl", []string{"/x.jsonl", "/nq/corpus.jsonl"}},
		{"/d", ",", []string{","}},
	} {
		c2 := config.Config{Data: c.data, Corpus: c.corpus}
		got := c2.CorpusFiles()
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("data %q corpus %q: %v, want %v", c.data, c.corpus, got, c.want)
		}
	}
}
