package retrieval_test

import (
	"context"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/retrieval"
)

type slowIndex struct{}

func (slowIndex) Search(ctx context.Context, _ retrieval.Query) ([]retrieval.Hit, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (slowIndex) Documents(context.Context, []string) ([]retrieval.Document, error) { return nil, nil }

type writableIndex struct{ slowIndex }

func (writableIndex) Put(context.Context, []retrieval.Document) error { return nil }
func (writableIndex) Count(context.Context) (int, error)              { return 7, nil }

// The timed index limits searches and stays a Writer exactly when the index is one.
func TestWithTimeout(t *testing.T) {
	x := retrieval.WithTimeout(slowIndex{}, "weaviate", 10*time.Millisecond, nil)
	if _, ok := x.(retrieval.Writer); ok {
		t.Error("a read-only index became a Writer")
	}
	if _, err := x.Search(context.Background(), retrieval.Query{}); errs.CodeOf(err) != errs.Unavailable {
		t.Errorf("a slow search: %v, want unavailable", err)
	}
	w, ok := retrieval.WithTimeout(writableIndex{}, "weaviate", time.Second, nil).(retrieval.Writer)
	if !ok {
		t.Fatal("a Writer lost Put and Count")
	}
	if n, err := w.Count(context.Background()); n != 7 || err != nil {
		t.Errorf("Count = %d, %v", n, err)
	}
}
