package weaviate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/retrievaltest"
	"github.com/google/go-cmp/cmp"
)

// clusterIndex returns DMAR_WEAVIATE_CLUSTER, the index setting that
// scripts/services.sh start weaviate-cluster prints, skipping the test when
// it is unset. CI runs these tests in a block of their own with the cluster
// started (scripts/test.sh), and checks there that they passed rather than
// skipped.
func clusterIndex(t testing.TB) string {
	t.Helper()
	return setting(t, "DMAR_WEAVIATE_CLUSTER", "DMAR_WEAVIATE_CLUSTER unset: run scripts/services.sh start weaviate-cluster and export its last line as DMAR_WEAVIATE_CLUSTER", "")
}

// clusterStore opens a fresh collection (dropped after the test) on the
// cluster, with shards shards, each on every node, written at ALL (so that
// every replica holds a write when Put returns, as the suite expects: a
// search or count reads one replica of each shard) and read at read.
func clusterStore(t testing.TB, index string, shards int, read string) *Store {
	return clusterStoreOn(t, index, shards, len(mustParse(t, index).hosts()), read)
}

func clusterStoreOn(t testing.TB, index string, shards, replicas int, read string) *Store {
	t.Helper()
	cfg, err := ParseURL(index)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Class = fmt.Sprintf("DmarCluster%d", rand.Int64())
	cfg.Create = true
	cfg.Shards, cfg.Replicas, cfg.ReadConsistency, cfg.WriteConsistency = shards, replicas, read, All
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Drop(context.Background()); err != nil {
			t.Errorf("drop %s: %v", cfg.Class, err)
		}
	})
	return s
}

// TestClusterConformance runs the search port's suite on the cluster: one
// shard held by every node (sharding would change BM25's statistics, each
// shard scoring with its own).
func TestClusterConformance(t *testing.T) {
	index := clusterIndex(t)
	retrievaltest.Run(t, func(t *testing.T) retrievaltest.Backend { return clusterStore(t, index, 1, Quorum) })
}

// TestClusterShardedSearch: with a shard per node, every document is found
// by id, filter and vector wherever its shard lives, and Count adds the
// shards up.
func TestClusterShardedSearch(t *testing.T) {
	index := clusterIndex(t)
	s := clusterStore(t, index, len(mustParse(t, index).hosts()), Quorum)
	ctx := context.Background()
	docs := retrievaltest.Docs()
	if err := s.Put(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Count(ctx); err != nil || n != len(docs) {
		t.Fatalf("Count = %d, %v; want %d", n, err, len(docs))
	}
	var all []string
	for _, d := range docs {
		all = append(all, d.ID)
	}
	got, err := s.Documents(ctx, all)
	if err != nil || len(got) != len(docs) {
		t.Fatalf("Documents found %d of %d: %v", len(got), len(docs), err)
	}
	hits, err := s.Search(ctx, retrieval.Query{Mode: retrieval.Vector, Vector: docs[3].Vector, Limit: 1})
	if err != nil || len(hits) != 1 || hits[0].Doc.ID != docs[3].ID {
		t.Fatalf("vector search for %s: %v, %v", docs[3].ID, ids(hits), err)
	}
	hits, err = s.Search(ctx, retrieval.Query{Mode: retrieval.BM25, Text: "France", Limit: 10, Filter: retrieval.Filter{AnyEntities: []string{"Q142"}}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"d4", "d5"}, sortedIDs(hits)); diff != "" {
		t.Errorf("filtered BM25 across shards (-want +got):\n%s", diff)
	}
}

// TestClusterDeadFirstHost: an index setting whose first host does not
// answer still connects, searches and writes through the others, each
// request at most once sent to the dead host before it is left out.
func TestClusterDeadFirstHost(t *testing.T) {
	index := clusterIndex(t)
	cfg := mustParse(t, index)
	dead := closedPort(t)
	hosts := append([]string{"127.0.0.1:" + dead}, hostsOf(cfg.hosts())...)
	grpcs := append([]string{closedPort(t)}, portsOf(cfg.grpcHosts())...)
	withDead := fmt.Sprintf("weaviate://%s/Document?grpc=%s", strings.Join(hosts, ","), strings.Join(grpcs, ","))
	s := clusterStoreOn(t, withDead, 1, len(cfg.hosts()), Quorum)
	ctx := context.Background()
	docs := retrievaltest.Docs()
	if err := s.Put(ctx, docs); err != nil {
		t.Fatalf("Put with the first host down: %v", err)
	}
	for i := 0; i < 6; i++ {
		hits, err := s.Search(ctx, retrieval.Query{Mode: retrieval.Hybrid, Text: "Nolan", Vector: docs[1].Vector, Alpha: 0.5, Limit: 3})
		if err != nil || len(hits) == 0 {
			t.Fatalf("search %d with the first host down: %v, %v", i, ids(hits), err)
		}
	}
}

func TestParseURLHosts(t *testing.T) {
	for _, tt := range []struct {
		raw         string
		hosts, grpc []string
	}{
		{"weaviate://a:1,b:2,c/C?grpc=7,8,9", []string{"http://a:1", "http://b:2", "http://c:8080"}, []string{"a:7", "b:8", "c:9"}},
		{"weaviate://a:1,b:2/C", []string{"http://a:1", "http://b:2"}, []string{"a:50051", "b:50051"}},
		{"weaviates://a,b/C?grpc=9", []string{"https://a:443", "https://b:443"}, []string{"a:9", "b:9"}},
		{"weaviate://a:1,b:2/C?grpc=x:7,y:8", []string{"http://a:1", "http://b:2"}, []string{"x:7", "y:8"}},
		{"weaviate://a:1/C?grpc=x:7", nil, nil},
	} {
		cfg, err := ParseURL(tt.raw)
		if err != nil {
			t.Errorf("%s: %v", tt.raw, err)
			continue
		}
		if !cmp.Equal(cfg.Hosts, tt.hosts) || !cmp.Equal(cfg.GRPCHosts, tt.grpc) {
			t.Errorf("%s: hosts %v grpc %v, want %v %v", tt.raw, cfg.Hosts, cfg.GRPCHosts, tt.hosts, tt.grpc)
		}
		if cfg.ReadConsistency != One || cfg.WriteConsistency != Quorum {
			t.Errorf("%s: consistency %s/%s, want ONE/QUORUM", tt.raw, cfg.ReadConsistency, cfg.WriteConsistency)
		}
	}
	for raw, want := range map[string]string{
		"weaviate://a:1,,b:2/C":           "empty host",
		"weaviate://a:1,a:1/C":            "listed twice",
		"weaviate://a:1,b:2/C?grpc=1,2,3": "names 3 endpoints for 2 hosts",
		"weaviate://a:1,b:2/C?grpc=x:7":   "names one host for 2 hosts",
		"weaviate://a:1,b:x/C":            "no valid port",
	} {
		if _, err := ParseURL(raw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", raw, err, want)
		}
	}
	cfg := Config{URL: "http://a:1", ReadConsistency: "SOME"}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "not a consistency level") {
		t.Errorf("read consistency SOME: %v", err)
	}
}

func mustParse(t testing.TB, raw string) Config {
	t.Helper()
	cfg, err := ParseURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// closedPort is a loopback port nothing listens on.
func closedPort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}

func portsOf(hostports []string) []string {
	out := make([]string, len(hostports))
	for i, hp := range hostports {
		_, out[i], _ = net.SplitHostPort(hp)
	}
	return out
}

func sortedIDs(hits []retrieval.Hit) []string {
	out := ids(hits)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
