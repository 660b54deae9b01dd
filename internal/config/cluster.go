package config

import (
	"slices"
	"strings"
)

// Consistencies are the consistency levels of weaviate.read_consistency and
// weaviate.write_consistency (Weaviate's replication).
var Consistencies = []string{"ONE", "QUORUM", "ALL"}

// validateWeaviate checks weaviate.*'s cluster settings.
func (c *Config) validateWeaviate(ps *Problems) {
	w := c.Weaviate
	if w.Shards < 0 || w.Shards > 1024 {
		ps.add("weaviate.shards", "must be between 0 (Weaviate's default: one per node) and 1024, got %d", w.Shards)
	}
	if w.Replicas < 0 || w.Replicas > 64 {
		ps.add("weaviate.replicas", "must be between 0 (one copy) and 64, got %d", w.Replicas)
	}
	for _, l := range []struct{ key, v string }{{"weaviate.read_consistency", w.ReadConsistency}, {"weaviate.write_consistency", w.WriteConsistency}} {
		if !slices.Contains(Consistencies, l.v) {
			ps.add(l.key, "%q: want one of %s", l.v, strings.Join(Consistencies, ", "))
		}
	}
}

// firstHost is an index URL with only the first of a comma-separated host
// list, which url.Parse cannot read when a host has no port.
func firstHost(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw
	}
	rest := raw[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	first, _, _ := strings.Cut(rest[:end], ",")
	return raw[:i+3] + first + rest[end:]
}
