package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/loaders/neo4jcsv"
)

// load kg --to csv:DIR streams a bundle into neo4j-admin's files: one node
// line per entity the embedded graph would hold (stubs of QIDs only triples
// name included), one relationship line per triple, and each node's degree
// as the embedded graph counts it.
func TestLoadKGToCSV(t *testing.T) {
	film, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Skip("shared data not found:", err)
	}
	ctx := context.Background()
	want, err := bundle.Read(ctx, film)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "csv")
	var stdout bytes.Buffer
	if err := Run(ctx, []string{"load", "kg", "--kg", film, "--to", "csv:" + out}, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "triples read ") {
		t.Errorf("summary %q names no counts", stdout.String())
	}
	nodes := lines(t, filepath.Join(out, neo4jcsv.NodesFile))
	rels := lines(t, filepath.Join(out, neo4jcsv.RelationshipsFile))
	if len(nodes)-1 != len(want.Entities) || len(rels)-1 != len(want.Triples) {
		t.Fatalf("%d nodes and %d relationships, want %d and %d", len(nodes)-1, len(rels)-1, len(want.Entities), len(want.Triples))
	}
	degree := map[string]string{}
	for _, l := range nodes[1:] {
		f := strings.Split(l, ",")
		degree[f[0]] = f[len(f)-1]
	}
	for _, e := range want.Entities {
		if got := degree[e.QID]; got != strconv.Itoa(e.Degree) {
			t.Fatalf("%s: degree %s in nodes.csv, %d in the bundle", e.QID, got, e.Degree)
		}
	}
	err = Run(ctx, []string{"load", "kg", "--kg", film, "--to", "csv:" + out, "--after-import"}, &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.As(err, new(usageError)) {
		t.Errorf("--to with --after-import: %v, want a usage error", err)
	}
	err = Run(ctx, []string{"load", "kg", "--kg", film, "--to", "tsv:" + out}, &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), "tsv") {
		t.Errorf("--to tsv:DIR: %v, want a usage error naming the sink", err)
	}
}

func lines(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}
