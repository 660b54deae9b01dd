package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// load kg goes to Neo4j for every Neo4j scheme the configuration accepts
// (neo4j+s:// used to exit 0 having loaded nothing), refuses the others
// naming the setting, and keeps the Neo4j-only flags to Neo4j.
func TestLoadKGBackends(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := Run(ctx, []string{"load", "kg", "--graph", "neo4j+s://127.0.0.1:1"}, &out, &out)
	if err == nil {
		t.Errorf("load kg into an unreachable neo4j+s:// succeeded: %s", out.String())
	}
	err = Run(ctx, []string{"load", "kg", "--graph", "https://127.0.0.1:1"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "graph") || !strings.Contains(err.Error(), `scheme "https"`) {
		t.Errorf("load kg --graph https://: %v, want the graph setting refused", err)
	}
	err = Run(ctx, []string{"load", "kg", "--graph", "embedded", "--after-import"}, &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.As(err, new(usageError)) {
		t.Errorf("load kg --after-import on the embedded graph: %v, want a usage error", err)
	}
	err = Run(ctx, []string{"load", "neo4j", "--bundle", "x", "--after-import"}, &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.As(err, new(usageError)) {
		t.Errorf("load neo4j with --bundle and --after-import: %v, want a usage error", err)
	}
}

// serve refuses what validation refuses, and accepts what it accepts.
func TestServeAndValidateShareSchemes(t *testing.T) {
	args := []string{"--graph", "http://127.0.0.1:1", "--index", "bolt://127.0.0.1:1"}
	err1 := Run(context.Background(), append([]string{"config", "check"}, args...), &bytes.Buffer{}, &bytes.Buffer{})
	err2 := Run(context.Background(), append([]string{"serve"}, args...), &bytes.Buffer{}, &bytes.Buffer{})
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Fatalf("config check: %v\nserve: %v", err1, err2)
	}
}
