package weaviate

import (
	"context"
	"fmt"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate/entities/models"
)

// Delete removes the documents with these ids (unknown ids are ignored)
// with Weaviate's batch delete, in chunks, and returns how many it removed.
func (s *Store) Delete(ctx context.Context, ids []string) (int, error) {
	total := 0
	for start := 0; start < len(ids); start += s.cfg.BatchSize {
		part := ids[start:min(start+s.cfg.BatchSize, len(ids))]
		w := filters.Where().WithPath([]string{propDocID}).WithOperator(filters.ContainsAny).WithValueText(part...)
		var res *models.BatchDeleteResponse
		err := retry(ctx, attempts, func() error {
			del := s.client.Batch().ObjectsBatchDeleter().WithClassName(s.cfg.Class).WithWhere(w).WithOutput("minimal").WithConsistencyLevel(s.writeConsistency())
			if s.cfg.Tenant != "" {
				del = del.WithTenant(s.cfg.Tenant)
			}
			var err error
			res, err = del.Do(ctx)
			return err
		})
		if err != nil {
			return total, unavailable(ctx, fmt.Sprintf("delete of %d documents", len(part)), err)
		}
		if res != nil && res.Results != nil {
			if res.Results.Failed > 0 {
				return total, fmt.Errorf("weaviate delete: %d of %d documents could not be deleted", res.Results.Failed, res.Results.Matches)
			}
			total += int(res.Results.Successful)
		}
	}
	return total, ctx.Err()
}
