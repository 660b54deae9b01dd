package weaviate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/go-openapi/strfmt"
	"github.com/google/uuid"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"
)

// namespace is the UUIDv5 namespace of dmar document ids.
var namespace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/dmar-kg/dmar/document"))

// ObjectID is the Weaviate object id of a document: UUIDv5 of its id, so
// that loading a corpus twice replaces objects instead of duplicating them.
func ObjectID(docID string) strfmt.UUID {
	return strfmt.UUID(uuid.NewSHA1(namespace, []byte(docID)).String())
}

// attempts is how often one batch request is tried on transient errors.
const attempts = 5

// Put stores docs, replacing documents with the same ids. It fails on the
// first bad document or on any object Weaviate refuses, naming them;
// LoadStats-style skipping is Load's job.
func (s *Store) Put(ctx context.Context, docs []retrieval.Document) error {
	dim := vectorDim(docs)
	for i := range docs {
		if err := checkDoc(docs[i], dim); err != nil {
			return errs.E(errs.Invalid, "document %d (%q): %v", i, docs[i].ID, err)
		}
	}
	for start := 0; start < len(docs); start += s.cfg.BatchSize {
		part := docs[start:min(start+s.cfg.BatchSize, len(docs))]
		failed, err := s.importBatch(ctx, part)
		if err != nil {
			return err
		}
		if len(failed) > 0 {
			return fmt.Errorf("weaviate put: %d of %d objects refused, first: %s", len(failed), len(part), failed[0])
		}
	}
	return nil
}

// LoadStats reconciles a load: Read = Imported + Skipped.
type LoadStats struct {
	Read, Imported, Skipped int
	// Problems holds the first few reasons for skipping.
	Problems []string
}

// maxProblems is how many skip reasons LoadStats keeps.
const maxProblems = 20

// Load imports docs in batches, skipping (and counting) bad documents and
// objects Weaviate refuses, printing progress (objects/s, ETA) to w (nil:
// silent). It stops at the first batch that fails as a whole after retries.
// `dmar load corpus --index weaviate://...` calls it.
func (s *Store) Load(ctx context.Context, docs []retrieval.Document, w io.Writer) (LoadStats, error) {
	st := LoadStats{Read: len(docs)}
	skip := func(why string) {
		st.Skipped++
		if len(st.Problems) < maxProblems {
			st.Problems = append(st.Problems, why)
		}
	}
	m := progress.New(w, "load weaviate "+s.cfg.Class, "objects", len(docs))
	dim := vectorDim(docs)
	batch := make([]retrieval.Document, 0, s.cfg.BatchSize)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		failed, err := s.importBatch(ctx, batch)
		if err != nil {
			return err
		}
		for _, f := range failed {
			skip(f)
		}
		st.Imported += len(batch) - len(failed)
		m.Add(len(batch))
		batch = batch[:0]
		return nil
	}
	for i, d := range docs {
		if err := checkDoc(d, dim); err != nil {
			skip(fmt.Sprintf("document %d (%q): %v", i, d.ID, err))
			m.Add(1)
			continue
		}
		batch = append(batch, d)
		if len(batch) == s.cfg.BatchSize {
			if err := flush(); err != nil {
				return st, err
			}
		}
	}
	if err := flush(); err != nil {
		return st, err
	}
	m.Done()
	if st.Read != st.Imported+st.Skipped {
		return st, fmt.Errorf("weaviate load: counts do not add up: read %d != imported %d + skipped %d", st.Read, st.Imported, st.Skipped)
	}
	return st, nil
}

// vectorDim is the dimension of the first vector among docs (0: none).
func vectorDim(docs []retrieval.Document) int {
	for _, d := range docs {
		if len(d.Vector) > 0 {
			return len(d.Vector)
		}
	}
	return 0
}

// checkDoc refuses documents Weaviate could not store faithfully, among
// them vectors whose dimension is not dim: Weaviate would store such an
// object and then fail to index its vector, leaving it half written.
func checkDoc(d retrieval.Document, dim int) error {
	switch {
	case strings.TrimSpace(d.ID) == "":
		return errors.New("empty id")
	case !isPrintable(d.ID):
		return fmt.Errorf("id %q has unprintable characters", d.ID)
	}
	for _, e := range d.Entities {
		if e == "" || !isPrintable(e) {
			return fmt.Errorf("entity %q is empty or unprintable", e)
		}
	}
	if len(d.Metadata) > 0 && !json.Valid(d.Metadata) {
		return fmt.Errorf("metadata %.80q is not JSON", d.Metadata)
	}
	if err := finite(d.Vector); err != nil {
		return fmt.Errorf("vector %v", err)
	}
	if len(d.Vector) > 0 && len(d.Vector) != dim {
		return fmt.Errorf("vector has %d dimensions, the other documents %d", len(d.Vector), dim)
	}
	return nil
}

// importBatch sends one batch with retries and returns the per-object
// failures (document id and reason).
func (s *Store) importBatch(ctx context.Context, docs []retrieval.Document) ([]string, error) {
	ids := make(map[strfmt.UUID]string, len(docs))
	objs := make([]*models.Object, len(docs))
	for i, d := range docs {
		id := ObjectID(d.ID)
		ids[id] = d.ID
		props := map[string]any{propDocID: d.ID, propTitle: d.Title, propText: d.Text}
		if len(d.Metadata) > 0 {
			props[propMetadata] = string(d.Metadata)
		}
		if len(d.Entities) > 0 {
			props[propEntities] = d.Entities
		}
		objs[i] = &models.Object{Class: s.cfg.Class, ID: id, Properties: props, Tenant: s.cfg.Tenant}
		if len(d.Vector) > 0 {
			objs[i].Vector = d.Vector
		}
	}
	res, err := s.sendBatch(ctx, objs)
	if err != nil {
		return nil, unavailable(ctx, fmt.Sprintf("import of %d objects", len(docs)), err)
	}
	var failed []string
	for _, r := range res {
		if r.Result == nil || r.Result.Errors == nil || len(r.Result.Errors.Error) == 0 {
			continue
		}
		msgs := make([]string, 0, len(r.Result.Errors.Error))
		for _, e := range r.Result.Errors.Error {
			if e != nil {
				msgs = append(msgs, e.Message)
			}
		}
		why := fmt.Sprintf("document %q: weaviate refused it: %s", ids[r.ID], strings.Join(msgs, "; "))
		// Weaviate may have stored the object before failing (a vector it
		// could not index): remove it, so that skipped means absent.
		del := s.client.Data().Deleter().WithClassName(s.cfg.Class).WithID(r.ID.String())
		if s.cfg.Tenant != "" {
			del = del.WithTenant(s.cfg.Tenant)
		}
		if err := del.Do(ctx); err != nil && !isStatus(err, http.StatusNotFound) {
			why += fmt.Sprintf(" (and removing what it kept failed: %v)", err)
		}
		failed = append(failed, why)
	}
	return failed, nil
}

// Count returns the number of stored documents.
func (s *Store) Count(ctx context.Context) (int, error) {
	agg := s.client.GraphQL().Aggregate().WithClassName(s.cfg.Class).
		WithFields(graphql.Field{Name: "meta", Fields: []graphql.Field{{Name: "count"}}})
	if s.cfg.Tenant != "" {
		agg = agg.WithTenant(s.cfg.Tenant)
	}
	res, err := agg.Do(ctx)
	if err != nil {
		return 0, unavailable(ctx, "count", err)
	}
	if err := gqlError(res.Errors); err != nil {
		return 0, unavailable(ctx, "count", err)
	}
	// {"Aggregate": {"Class": [{"meta": {"count": N}}]}}
	a, _ := res.Data["Aggregate"].(map[string]any)
	list, _ := a[s.cfg.Class].([]any)
	if len(list) == 0 {
		return 0, nil
	}
	first, _ := list[0].(map[string]any)
	meta, _ := first["meta"].(map[string]any)
	n, ok := meta["count"].(float64)
	if !ok {
		return 0, unavailable(ctx, "count", fmt.Errorf("unexpected aggregate response %v", res.Data))
	}
	return int(n), nil
}
