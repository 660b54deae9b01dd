package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/loaders/neo4jcsv"
)

func TestLoadWikidataCommand(t *testing.T) {
	dir, err := datapath.Dataset("wikidata-dump-sample")
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	dump := filepath.Join(dir, "latest-all-first50.json")
	out := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--to", "csv:" + filepath.Join(out, "csv")}, "read 49, loaded 49, filtered 0, bad 0"},
		{[]string{"--to", "bundle:" + filepath.Join(out, "b"), "--seeds", "Q22", "--hops", "1", "--properties", "P131,P17", "--lang", "de,en"}, "read 49, loaded 2, filtered 47, bad 0"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		// The shared sample is the first lines of a real dump, cut off.
		args := append([]string{"load", "wikidata", "--dump", dump, "--workers", "2", "--allow-truncated"}, tt.args...)
		if err := Run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		if !strings.Contains(stdout.String(), tt.want) {
			t.Fatalf("%v: stdout %q lacks %q", args, stdout.String(), tt.want)
		}
		if !strings.Contains(stderr.String(), "MB/s") || !strings.Contains(stderr.String(), "entities/s") || !strings.Contains(stderr.String(), "ETA") {
			t.Fatalf("no progress line on stderr: %q", stderr.String())
		}
	}
	for _, f := range []string{"csv/" + neo4jcsv.NodesFile, "csv/" + neo4jcsv.RelationshipsFile, "b/triples.tsv", "b/entities.jsonl", "b/relations.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(out, "b", "entities.jsonl"))
	if !strings.Contains(string(b), `"label":"Schottland"`) {
		t.Fatalf("German label missing:\n%s", b)
	}
}

func TestLoadCommandsRejectBadArguments(t *testing.T) {
	for _, args := range [][]string{
		{"load", "wikidata", "--to", "csv:/tmp/x"},
		{"load", "wikidata", "--dump", "x.json", "--to", "ftp:dir"},
		{"load", "sparql", "--endpoint", "http://127.0.0.1:1/sparql", "--to", "bundle:/tmp/x"},
	} {
		err := Run(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
		if !errors.As(err, new(usageError)) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
}

// Without the shared data (run outside the repository), the default relation
// labels file is missing: the load must fail naming it, not write a graph
// whose relations have no labels and exit 0.
func TestLoadWikidataNeedsRelationLabels(t *testing.T) {
	dir, err := datapath.Dataset("wikidata-dump-sample")
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	dump := filepath.Join(dir, "latest-all-first50.json")
	t.Setenv("DMAR_SHARED_DATA", t.TempDir())
	out := filepath.Join(t.TempDir(), "csv")
	var stdout, stderr bytes.Buffer
	err = Run(context.Background(), []string{"load", "wikidata", "--dump", dump, "--to", "csv:" + out, "--quiet"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "relation labels file not found") || !strings.Contains(err.Error(), "--relations") {
		t.Fatalf("err = %v, want a missing relation labels error naming --relations", err)
	}
	if _, serr := os.Stat(filepath.Join(out, "nodes.csv")); serr == nil {
		t.Fatal("a failed load wrote nodes.csv")
	}
}
