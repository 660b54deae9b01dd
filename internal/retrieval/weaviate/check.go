package weaviate

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Missing returns the ids among ids whose documents the collection does
// not hold, each read by its object id at consistency level (ALL: every
// replica is asked, and one that lacks the object is repaired from the
// others; a document is missing only when no replica has it). It is the
// check of the failover benchmark: acknowledged writes that were lost.
func (s *Store) Missing(ctx context.Context, ids []string, level string) ([]string, error) {
	var missing []string
	for _, id := range ids {
		g := s.client.Data().ObjectsGetter().WithClassName(s.cfg.Class).WithID(ObjectID(id).String())
		if s.replicated {
			g = g.WithConsistencyLevel(level)
		}
		if s.cfg.Tenant != "" {
			g = g.WithTenant(s.cfg.Tenant)
		}
		objs, err := g.Do(ctx)
		switch {
		case isStatus(err, http.StatusNotFound):
			missing = append(missing, id)
		case err != nil:
			return nil, unavailable(ctx, fmt.Sprintf("read document %q at %s", id, level), err)
		case len(objs) == 0:
			missing = append(missing, id)
		}
	}
	return missing, nil
}

// NodeObjects is, per node name, how many objects of the collection the
// node holds over its shard replicas (the failover benchmark compares a
// restarted node with the others: caught up when it holds as many).
func (s *Store) NodeObjects(ctx context.Context) (map[string]int64, error) {
	st, err := s.client.Cluster().NodesStatusGetter().WithClass(s.cfg.Class).WithOutput("verbose").Do(ctx)
	if err != nil {
		return nil, unavailable(ctx, "node status", err)
	}
	out := map[string]int64{}
	for _, n := range st.Nodes {
		if n == nil {
			continue
		}
		var c int64
		for _, sh := range n.Shards {
			if sh != nil && sh.Class == s.cfg.Class {
				c += sh.ObjectCount
			}
		}
		out[n.Name] = c
	}
	return out, nil
}

// WaitIndexed returns once every shard of the collection has indexed the
// vectors queued for it. With Weaviate's asynchronous indexing
// (ASYNC_INDEXING=true) an import returns when the objects are stored, and
// their vectors reach the HNSW graph later: until then vector and hybrid
// searches miss them. Without it the queue is always empty and this
// returns at once.
func (s *Store) WaitIndexed(ctx context.Context) error {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		st, err := s.client.Cluster().NodesStatusGetter().WithClass(s.cfg.Class).WithOutput("verbose").Do(ctx)
		if err != nil {
			return unavailable(ctx, "node status", err)
		}
		var queued int64
		for _, n := range st.Nodes {
			for _, sh := range n.Shards {
				if sh != nil && sh.Class == s.cfg.Class {
					queued += sh.VectorQueueLength
				}
			}
		}
		if queued == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for weaviate to index %d queued vectors: %w", queued, ctx.Err())
		case <-t.C:
		}
	}
}
