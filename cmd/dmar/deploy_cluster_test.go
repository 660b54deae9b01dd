package main

import (
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/config"
	"github.com/dmar-kg/dmar/internal/retrieval/weaviate"
)

// docker-compose.cluster.yml over docker-compose.yml is valid, and the
// settings it gives dmar are: an index naming the three nodes, each shard
// on all three, consistency levels dmar accepts.
func TestComposeClusterFileIsValid(t *testing.T) {
	composeConfig(t, "docker-compose.yml", "docker-compose.cluster.yml")
	y := readRepoFile(t, "docker-compose.cluster.yml")
	env := map[string]string{}
	for _, l := range strings.Split(y, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), ": ")
		if ok && strings.HasPrefix(k, "DMAR_") {
			env[k] = strings.Trim(v, `"`)
		}
	}
	c := config.Default(t.TempDir(), "")
	if ps := config.Env(&c, func(k string) string { return env[k] }); len(ps) != 0 {
		t.Fatal(ps)
	}
	wc, err := weaviate.ParseURL(c.Index)
	if err != nil {
		t.Fatal(err)
	}
	if len(wc.Hosts) != 3 || c.Weaviate.Replicas != 3 {
		t.Errorf("compose cluster: index %s (%d hosts), replicas %d; want 3 nodes each holding every shard", c.Index, len(wc.Hosts), c.Weaviate.Replicas)
	}
	if c.Weaviate.ReadConsistency != "ONE" || c.Weaviate.WriteConsistency != "QUORUM" {
		t.Errorf("compose cluster consistency %s/%s", c.Weaviate.ReadConsistency, c.Weaviate.WriteConsistency)
	}
	for _, node := range []string{"weaviate-1:", "weaviate-2:", "CLUSTER_JOIN: weaviate:7100,weaviate-1:7100,weaviate-2:7100"} {
		if !strings.Contains(y, node) {
			t.Errorf("docker-compose.cluster.yml lacks %q", node)
		}
	}
}
