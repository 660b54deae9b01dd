package config_test

import (
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/config"
)

// A cluster: several hosts in the index setting, sharding, replication and
// consistency from the file and the environment, each checked.
func TestWeaviateClusterSettings(t *testing.T) {
	c := config.Default(t.TempDir(), bundleDir(t))
	if c.Weaviate.ReadConsistency != "ONE" || c.Weaviate.WriteConsistency != "QUORUM" {
		t.Errorf("default consistency %s/%s, want ONE/QUORUM", c.Weaviate.ReadConsistency, c.Weaviate.WriteConsistency)
	}
	f := write(t, "dmar.yaml", "index: weaviate://a:8080,b:8080,c/Doc?grpc=50051\nweaviate:\n  shards: 3\n  replicas: 3\n")
	if ps := config.File(&c, f); len(ps) != 0 {
		t.Fatal(ps)
	}
	if ps := config.Env(&c, envOf(map[string]string{"DMAR_WEAVIATE_READ_CONSISTENCY": "QUORUM"})); len(ps) != 0 {
		t.Fatal(ps)
	}
	if ps := c.Validate(); len(ps) != 0 {
		t.Fatalf("cluster settings refused: %v", ps)
	}
	if w := c.Weaviate; w.Shards != 3 || w.Replicas != 3 || w.ReadConsistency != "QUORUM" || w.WriteConsistency != "QUORUM" {
		t.Errorf("weaviate settings %+v", w)
	}
	if b := c.IndexBackend(); b.URL != "weaviate://a:8080,b:8080,c/Doc?grpc=50051" || b.Scheme != "weaviate" {
		t.Errorf("index backend %+v", b)
	}

	bad := config.Default(t.TempDir(), bundleDir(t))
	bad.Weaviate = config.Weaviate{Shards: -1, Replicas: 100, ReadConsistency: "SOME", WriteConsistency: "one"}
	bad.Index = "weaviate://a:8080,b:8080/Doc"
	got := bad.Validate().Error()
	for _, want := range []string{"weaviate.shards", "weaviate.replicas", `weaviate.read_consistency: "SOME"`, `weaviate.write_consistency: "one"`} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q lack %q", got, want)
		}
	}
	if strings.Contains(got, "index") {
		t.Errorf("a host list was refused: %s", got)
	}
}
