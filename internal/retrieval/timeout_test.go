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

// slowCosines computes cosines only after its context ends.
type slowCosines struct{ slowIndex }

func (slowCosines) Cosines(ctx context.Context, _ []float32, _ []string, _ retrieval.Filter) (map[string]float64, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

type writableCosines struct{ writableIndex }

func (writableCosines) Cosines(context.Context, []float32, []string, retrieval.Filter) (map[string]float64, error) {
	return map[string]float64{"d1": 0.5}, nil
}

// The timed index is a CosineReader exactly when the index is one, with or
// without Put and Count, and limits Cosines as it limits Search.
func TestWithTimeoutKeepsCosines(t *testing.T) {
	for _, x := range []retrieval.Index{slowIndex{}, writableIndex{}} {
		if _, ok := retrieval.WithTimeout(x, "weaviate", time.Second, nil).(retrieval.CosineReader); ok {
			t.Errorf("%T became a CosineReader", x)
		}
	}
	c, ok := retrieval.WithTimeout(slowCosines{}, "weaviate", 10*time.Millisecond, nil).(retrieval.CosineReader)
	if !ok {
		t.Fatal("a CosineReader lost Cosines")
	}
	if _, err := c.Cosines(context.Background(), nil, []string{"d1"}, retrieval.Filter{}); errs.CodeOf(err) != errs.Unavailable {
		t.Errorf("slow Cosines: %v, want unavailable", err)
	}
	x := retrieval.WithTimeout(writableCosines{}, "weaviate", time.Second, nil)
	if _, ok := x.(retrieval.Writer); !ok {
		t.Error("a Writer and CosineReader lost Put and Count")
	}
	c, ok = x.(retrieval.CosineReader)
	if !ok {
		t.Fatal("a Writer and CosineReader lost Cosines")
	}
	if got, err := c.Cosines(context.Background(), nil, []string{"d1"}, retrieval.Filter{}); err != nil || got["d1"] != 0.5 {
		t.Errorf("Cosines = %v, %v; want d1 0.5", got, err)
	}
}
