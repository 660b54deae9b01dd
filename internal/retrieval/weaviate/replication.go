package weaviate

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"
	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Consistency levels of Weaviate's replication: how many of a shard's
// replicas must answer a read, or acknowledge a write, before it succeeds.
const (
	One    = "ONE"
	Quorum = "QUORUM"
	All    = "ALL"
)

// DefaultReadConsistency and DefaultWriteConsistency are what dmar asks for
// when not told otherwise: a read answered by one replica (a lost node does
// not slow searches), a write acknowledged by a majority (a write survives
// the loss of any one node of three).
const (
	DefaultReadConsistency  = One
	DefaultWriteConsistency = Quorum
)

// CheckConsistency says why level is not a consistency level ("" when it is).
func CheckConsistency(level string) string {
	switch level {
	case One, Quorum, All:
		return ""
	}
	return fmt.Sprintf("%q is not a consistency level (ONE, QUORUM or ALL)", level)
}

// validateCluster checks and defaults the cluster settings of c.
func (c *Config) validateCluster() error {
	if c.ReadConsistency == "" {
		c.ReadConsistency = DefaultReadConsistency
	}
	if c.WriteConsistency == "" {
		c.WriteConsistency = DefaultWriteConsistency
	}
	for _, l := range []struct{ name, v string }{{"read", c.ReadConsistency}, {"write", c.WriteConsistency}} {
		if why := CheckConsistency(l.v); why != "" {
			return fmt.Errorf("weaviate: %s consistency %s", l.name, why)
		}
	}
	if c.Shards < 0 || c.Replicas < 0 {
		return fmt.Errorf("weaviate: shards (%d) and replicas (%d) must not be negative", c.Shards, c.Replicas)
	}
	return nil
}

// replicationDef is the sharding and replication of a collection dmar
// creates: Shards shards (0: Weaviate's default, one per node) and
// Replicas copies of each (0: one). With more than one copy, asynchronous
// replication is on, so that a node that was down catches up on the writes
// it missed without waiting for reads to repair them.
func replicationDef(cfg Config, cls *models.Class) {
	if cfg.Shards > 0 {
		cls.ShardingConfig = map[string]any{"desiredCount": cfg.Shards}
	}
	if cfg.Replicas > 1 {
		cls.ReplicationConfig = &models.ReplicationConfig{Factor: int64(cfg.Replicas), AsyncEnabled: true}
	}
}

// checkReplication refuses an existing collection whose replication factor
// is not the one configured (when one is): a collection loaded without
// copies does not survive a lost node, however many hosts dmar is given.
func checkReplication(cls *models.Class, cfg Config) error {
	if cfg.Replicas == 0 {
		return nil
	}
	got := int64(1)
	if cls.ReplicationConfig != nil && cls.ReplicationConfig.Factor > 0 {
		got = cls.ReplicationConfig.Factor
	}
	if got != int64(cfg.Replicas) {
		return fmt.Errorf("weaviate: collection %s has replication factor %d, not the configured %d; "+
			"drop and reload it, or set weaviate.replicas (DMAR_WEAVIATE_REPLICAS) to %d", cfg.Class, got, cfg.Replicas, got)
	}
	return nil
}

// get starts a Get query on the collection, at the read consistency
// level when the collection is replicated.
func (s *Store) get() *graphql.GetBuilder {
	g := s.client.GraphQL().Get().WithClassName(s.cfg.Class)
	if s.replicated {
		g = g.WithConsistencyLevel(s.cfg.ReadConsistency)
	}
	return g
}

// writeConsistency is the consistency level writes name: none on a
// collection without replication.
func (s *Store) writeConsistency() string {
	if s.replicated {
		return s.cfg.WriteConsistency
	}
	return ""
}

// isReplicated reports whether cls keeps more than one copy of its shards.
func isReplicated(cls *models.Class) bool {
	return cls.ReplicationConfig != nil && cls.ReplicationConfig.Factor > 1
}

// hosts are the REST/GraphQL base URLs of the nodes, URL first.
func (c Config) hosts() []string {
	if len(c.Hosts) > 0 {
		return c.Hosts
	}
	return []string{c.URL}
}

// grpcHosts are the gRPC endpoints of the nodes, GRPC first.
func (c Config) grpcHosts() []string {
	if len(c.GRPCHosts) > 0 {
		return c.GRPCHosts
	}
	return []string{c.GRPC}
}

// hostsOf are base URLs' host:port.
func hostsOf(urls []string) []string {
	out := make([]string, len(urls))
	for i, u := range urls {
		p, _ := url.Parse(u)
		out[i] = p.Host
	}
	return out
}

// pingAny is ping of each base URL in turn until one answers.
func pingAny(ctx context.Context, bases []string, timeout time.Duration) error {
	var errs []error
	for _, b := range bases {
		err := ping(ctx, b, timeout)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// sendBatch writes objs at the write consistency level. A batch that fails
// as a whole is sent again while its error is transient (retry); objects
// that fail on their own with an error of the cluster, not of the object
// (a shard not yet loaded on a node of a collection just created, too few
// replicas reached while a node is lost), are sent again, alone, with the
// same backoff. It returns every object's last result.
func (s *Store) sendBatch(ctx context.Context, objs []*models.Object) ([]models.ObjectsGetResponse, error) {
	final := make(map[strfmt.UUID]models.ObjectsGetResponse, len(objs))
	wait := 200 * time.Millisecond
	pending := objs
	for try := 0; ; try++ {
		var res []models.ObjectsGetResponse
		err := retry(ctx, attempts, func() error {
			var err error
			res, err = s.client.Batch().ObjectsBatcher().WithObjects(pending...).WithConsistencyLevel(s.writeConsistency()).Do(ctx)
			return err
		})
		if err != nil {
			return nil, err
		}
		var again []*models.Object
		byID := make(map[strfmt.UUID]*models.Object, len(pending))
		for _, o := range pending {
			byID[o.ID] = o
		}
		for _, r := range res {
			final[r.ID] = r
			if try < objectAttempts-1 && transientObject(r) && byID[r.ID] != nil {
				again = append(again, byID[r.ID])
			}
		}
		if len(again) == 0 || ctx.Err() != nil {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
		wait = min(2*wait, 2*time.Second)
		pending = again
	}
	out := make([]models.ObjectsGetResponse, 0, len(objs))
	for _, o := range objs {
		if r, ok := final[o.ID]; ok {
			out = append(out, r)
		}
	}
	return out, ctx.Err()
}

// objectAttempts is how often one object is sent while its failure is
// the cluster's (with backoff from 0.2 s to 2 s: about 10 s in all).
const objectAttempts = 8

// transientObject reports whether an object failed for a reason of the
// cluster's, which sending it again can cure, rather than of the object's.
func transientObject(r models.ObjectsGetResponse) bool {
	if r.Result == nil || r.Result.Errors == nil {
		return false
	}
	for _, e := range r.Result.Errors.Error {
		if e == nil {
			continue
		}
		m := strings.ToLower(e.Message)
		for _, s := range transientMessages {
			if strings.Contains(m, s) {
				return true
			}
		}
	}
	return false
}

// transientMessages are parts of Weaviate's per-object errors that name a
// cluster condition: a collection whose shards a node has not loaded yet,
// replicas that could not be reached or did not agree in time, a node
// starting or going away.
var transientMessages = []string{
	"could not find index", "cannot achieve consistency", "cannot reach enough replicas", "broadcast",
	"replica", "connection refused", "connection reset", "context deadline exceeded", "i/o timeout",
	"eof", "not ready", "shutting down", "unavailable", "resolve node", "no such host", "shard",
}

// waitLoaded waits (at most shardWait) until every replica of every shard
// of the collection cls is loaded on its node. A collection is created
// through raft and each node loads its shards when it applies the change;
// a batch sent before then is refused by the nodes that have not, and a
// QUORUM write that the others took leaves those replicas without the
// object until asynchronous replication brings it (a search reads one
// replica of each shard, so it can miss the object meanwhile).
func (s *Store) waitLoaded(ctx context.Context, cls *models.Class) error {
	want := shardCount(cls)
	if cls.ReplicationConfig != nil && cls.ReplicationConfig.Factor > 1 {
		want *= int(cls.ReplicationConfig.Factor)
	}
	ctx, cancel := context.WithTimeout(ctx, shardWait)
	defer cancel()
	for {
		got, err := s.loadedShards(ctx)
		if err == nil && got >= want {
			return nil
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			if err == nil {
				err = fmt.Errorf("%d of %d shard replicas loaded", got, want)
			}
			return unavailable(ctx, "wait for the shards of "+s.cfg.Class, err)
		case <-t.C:
		}
	}
}

// shardWait bounds waitLoaded.
const shardWait = 60 * time.Second

// loadedShards counts the collection's shard replicas loaded on the nodes.
func (s *Store) loadedShards(ctx context.Context) (int, error) {
	st, err := s.client.Cluster().NodesStatusGetter().WithClass(s.cfg.Class).WithOutput("verbose").Do(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, node := range st.Nodes {
		for _, sh := range node.Shards {
			if sh != nil && sh.Class == s.cfg.Class && sh.Loaded {
				n++
			}
		}
	}
	return n, nil
}

// shardCount is the collection's number of shards (1 when it does not say).
func shardCount(cls *models.Class) int {
	if m, ok := cls.ShardingConfig.(map[string]any); ok {
		for _, k := range []string{"actualCount", "desiredCount"} {
			if v, ok := m[k].(float64); ok && v >= 1 {
				return int(v)
			}
		}
	}
	return 1
}

// search1 sends one gRPC search at the read consistency level (on a
// replicated collection). On a cluster a search whose node went away
// (Unavailable: the connection broke, or the node is shutting down) or has
// just come back without the collection's schema yet (rejoining), is sent
// again, up to rpcAttempts times, and gRPC's balancer takes it to another
// node (grpchosts.go); searches change nothing, so sending one twice is
// harmless.
func (s *Store) search1(ctx context.Context, req *pb.SearchRequest) (*pb.SearchReply, error) {
	if s.replicated {
		req.ConsistencyLevel = consistencyPB(s.cfg.ReadConsistency)
	}
	tries := 1
	if len(s.cfg.GRPCHosts) > 1 {
		tries = rpcAttempts
	}
	wait := 50 * time.Millisecond
	for i := 1; ; i++ {
		res, err := s.rpc.c.Search(ctx, req)
		if err == nil || i == tries || !rejoining(err) || ctx.Err() != nil {
			return res, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return res, err
		case <-t.C:
		}
		wait *= 2
	}
}

// rejoining reports whether a search's node is away or not back yet: gone
// (Unavailable), or restarted and ready before it has applied the cluster's
// schema, when it answers that the collection does not exist (seen in
// dmar bench failover on a loaded machine, seconds after a restart).
func rejoining(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	m := st.Message()
	return st.Code() == codes.Unavailable ||
		st.Code() == codes.Unknown && strings.Contains(m, "could not find class") && strings.Contains(m, "in schema")
}

// rpcAttempts is how often a search is sent on a cluster.
const rpcAttempts = 4

func consistencyPB(level string) *pb.ConsistencyLevel {
	switch level {
	case One:
		return pb.ConsistencyLevel_CONSISTENCY_LEVEL_ONE.Enum()
	case All:
		return pb.ConsistencyLevel_CONSISTENCY_LEVEL_ALL.Enum()
	}
	return pb.ConsistencyLevel_CONSISTENCY_LEVEL_QUORUM.Enum()
}
