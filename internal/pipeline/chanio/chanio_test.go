package chanio_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dmar-kg/dmar/internal/pipeline/chanio"
)

// A lazy relation vector is encoded once, on first read, however many
// readers ask at once; its error reaches every reader; an encoded one is
// never encoded.
func TestRelVector(t *testing.T) {
	var calls atomic.Int32
	r := chanio.Lazy(func(context.Context) ([]float32, error) {
		calls.Add(1)
		return []float32{1, 2}, nil
	})
	if calls.Load() != 0 {
		t.Fatal("encoded before it was read")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if v, err := r.Get(context.Background()); err != nil || !slices.Equal(v, []float32{1, 2}) {
				t.Errorf("Get = %v, %v", v, err)
			}
		})
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("encoded %d times, want once", n)
	}
	boom := errors.New("encoder down")
	failing := chanio.Lazy(func(context.Context) ([]float32, error) { return nil, boom })
	for range 2 {
		if _, err := failing.Get(context.Background()); !errors.Is(err, boom) {
			t.Errorf("Get error %v, want %v", err, boom)
		}
	}
	if v, err := chanio.Encoded([]float32{3}).Get(context.Background()); err != nil || !slices.Equal(v, []float32{3}) {
		t.Errorf("Encoded: %v, %v", v, err)
	}
}
