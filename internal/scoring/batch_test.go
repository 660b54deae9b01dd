package scoring_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dmar-kg/dmar/internal/scoring"
)

// countingEncoder gives each text a vector derived from its bytes, records
// every call's size and how many calls overlap, and can be made slow.
type countingEncoder struct {
	delay     time.Duration
	calls     atomic.Int32
	inFlight  atomic.Int32
	maxFlight atomic.Int32
	mu        sync.Mutex
	sizes     []int
	ctxs      []context.Context
}

func (e *countingEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	n := e.inFlight.Add(1)
	defer e.inFlight.Add(-1)
	for {
		m := e.maxFlight.Load()
		if n <= m || e.maxFlight.CompareAndSwap(m, n) {
			break
		}
	}
	e.calls.Add(1)
	e.mu.Lock()
	e.sizes = append(e.sizes, len(texts))
	e.ctxs = append(e.ctxs, ctx)
	e.mu.Unlock()
	select {
	case <-time.After(e.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out := make([][]float32, len(texts))
	for i, s := range texts {
		h := fnv.New32a()
		h.Write([]byte(s))
		out[i] = []float32{float32(h.Sum32()), float32(len(s))}
	}
	return out, nil
}

func (e *countingEncoder) Dim() int        { return 2 }
func (e *countingEncoder) Version() string { return "counting" }

var _ scoring.Encoder = (*scoring.BatchEncoder)(nil)

// Concurrent single-text calls share model calls, each caller gets exactly
// the vectors an unbatched call gives, and batches respect MaxBatch.
func TestBatchEncoderMergesConcurrentCalls(t *testing.T) {
	inner := &countingEncoder{delay: 5 * time.Millisecond}
	b := scoring.Batched(inner, scoring.BatchConfig{Window: 20 * time.Millisecond, MaxBatch: 8})
	ref := &countingEncoder{}
	const callers = 24
	var wg sync.WaitGroup
	errc := make(chan error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			texts := []string{fmt.Sprintf("question %d", i)}
			if i%3 == 0 {
				texts = append(texts, fmt.Sprintf("second text of %d", i))
			}
			got, err := b.Encode(context.Background(), texts)
			if err != nil {
				errc <- err
				return
			}
			want, _ := ref.Encode(context.Background(), texts)
			if !reflect.DeepEqual(got, want) {
				errc <- fmt.Errorf("caller %d: got %v, want %v", i, got, want)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if calls, texts := b.Stats(); calls != int64(inner.calls.Load()) || texts != int64(callers+callers/3) {
		t.Errorf("Stats: %d calls, %d texts; the model saw %d calls", calls, texts, inner.calls.Load())
	}
	if n := inner.calls.Load(); n >= callers/2 {
		t.Errorf("%d model calls for %d callers: not batched", n, callers)
	}
	total := 0
	for _, s := range inner.sizes {
		if s > 8 {
			t.Errorf("a batch of %d texts, MaxBatch 8", s)
		}
		total += s
	}
	if total != callers+callers/3 {
		t.Errorf("%d texts encoded, want %d", total, callers+callers/3)
	}
	if m := inner.maxFlight.Load(); m > 1 {
		t.Errorf("%d model calls at once, MaxInFlight 1", m)
	}
}

// A caller whose deadline passes while its batch waits (here: behind a slow
// call holding the only slot) returns its context's error in time, and the
// others in its batch still get their vectors.
func TestBatchEncoderHonoursEachDeadline(t *testing.T) {
	inner := &countingEncoder{delay: 300 * time.Millisecond}
	b := scoring.Batched(inner, scoring.BatchConfig{Window: time.Millisecond, MaxBatch: 4})
	go func() { _, _ = b.Encode(context.Background(), []string{"occupies the slot"}) }() // only holds the slot
	time.Sleep(20 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	var otherErr error
	var other [][]float32
	go func() {
		defer wg.Done()
		other, otherErr = b.Encode(context.Background(), []string{"patient"})
	}()
	start := time.Now()
	_, err := b.Encode(ctx, []string{"in a hurry"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 200*time.Millisecond {
		t.Errorf("err %v after %s, want the deadline's error at about 50ms", err, time.Since(start))
	}
	wg.Wait()
	if otherErr != nil || len(other) != 1 {
		t.Errorf("the patient caller: %v, %d vectors", otherErr, len(other))
	}
	// The second batch was sent without the caller that had left.
	inner.mu.Lock()
	defer inner.mu.Unlock()
	if len(inner.sizes) != 2 || inner.sizes[1] != 1 {
		t.Errorf("batch sizes %v, want [1 1]", inner.sizes)
	}
}

// The model call's context ends only once every caller of the batch has
// gone: one caller cancelling does not fail the others.
func TestBatchEncoderOneCancelDoesNotFailOthers(t *testing.T) {
	inner := &countingEncoder{delay: 100 * time.Millisecond}
	b := scoring.Batched(inner, scoring.BatchConfig{Window: 10 * time.Millisecond, MaxBatch: 4})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var errA, errB error
	wg.Add(2)
	go func() { defer wg.Done(); _, errA = b.Encode(ctx, []string{"a"}) }()
	go func() { defer wg.Done(); _, errB = b.Encode(context.Background(), []string{"b"}) }()
	time.Sleep(40 * time.Millisecond) // both are in the running call
	cancel()
	wg.Wait()
	if !errors.Is(errA, context.Canceled) || errB != nil {
		t.Errorf("cancelled caller: %v (want canceled); other: %v (want nil)", errA, errB)
	}
	if n := inner.calls.Load(); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
	inner.mu.Lock()
	mctx := inner.ctxs[0]
	inner.mu.Unlock()
	// Once every caller has gone the call's context is released.
	select {
	case <-mctx.Done():
	case <-time.After(time.Second):
		t.Error("the model call's context was never released")
	}
}

// Calls larger than MaxBatch, and empty ones, go straight to the model.
func TestBatchEncoderPassesLargeCallsThrough(t *testing.T) {
	inner := &countingEncoder{}
	b := scoring.Batched(inner, scoring.BatchConfig{Window: time.Hour, MaxBatch: 2})
	got, err := b.Encode(context.Background(), []string{"a", "b", "c"})
	if err != nil || len(got) != 3 || inner.calls.Load() != 1 {
		t.Errorf("%d vectors, %v, %d calls", len(got), err, inner.calls.Load())
	}
	if b.Dim() != 2 || b.Version() != "counting" {
		t.Errorf("Dim %d Version %q: not the wrapped encoder's", b.Dim(), b.Version())
	}
}

// A batch of short and long texts goes in one model call per length, each
// caller still getting its own vectors; texts of similar length share one.
func TestBatchEncoderGroupsByLength(t *testing.T) {
	long := strings.Repeat("a reformulated query with many entity labels ", 8) // 360 bytes
	for _, c := range []struct {
		name  string
		texts []string
		calls []int // texts per model call, in order
	}{
		{"mixed", []string{"who directed inception", long + "1", "where was nolan born", long + "22", "who wrote it", long + "333"}, []int{3, 3}},
		{"similar", []string{"who directed inception", "where was christopher nolan born", "who wrote it", "what country is amelie from"}, []int{4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			inner := &countingEncoder{}
			b := scoring.Batched(inner, scoring.BatchConfig{Window: 50 * time.Millisecond, MaxBatch: 32})
			ref := &countingEncoder{}
			var wg sync.WaitGroup
			for _, s := range c.texts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got, err := b.Encode(context.Background(), []string{s})
					want, _ := ref.Encode(context.Background(), []string{s})
					if err != nil || !reflect.DeepEqual(got, want) {
						t.Errorf("%q: got %v (%v), want %v", s, got, err, want)
					}
				}()
			}
			wg.Wait()
			if !reflect.DeepEqual(inner.sizes, c.calls) {
				t.Errorf("model calls of %v texts, want %v", inner.sizes, c.calls)
			}
			if calls, texts := b.Stats(); calls != int64(len(c.calls)) || texts != int64(len(c.texts)) {
				t.Errorf("Stats %d calls %d texts", calls, texts)
			}
		})
	}
}

// With PerCaller a lone caller does not wait out the Window (a call of its
// own gains nothing from waiting), and concurrent callers still get a call
// each, one slot at a time, with the vectors an unbatched call gives.
func TestBatchEncoderPerCallerDoesNotWait(t *testing.T) {
	inner := &countingEncoder{delay: time.Millisecond}
	b := scoring.Batched(inner, scoring.BatchConfig{Window: time.Hour, MaxBatch: 8, PerCaller: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.Encode(ctx, []string{"alone"}); err != nil {
		t.Fatalf("a lone caller waited for the window: %v", err)
	}
	var wg sync.WaitGroup
	errc := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := fmt.Sprintf("q%d", i)
			got, err := b.Encode(ctx, []string{text})
			if err != nil {
				errc <- err
				return
			}
			want, _ := (&countingEncoder{}).Encode(context.Background(), []string{text})
			if got[0][0] != want[0][0] || got[0][1] != want[0][1] {
				errc <- fmt.Errorf("%s: %v, want %v", text, got, want)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if calls, _ := b.Stats(); calls != 17 {
		t.Errorf("%d model calls for 17 callers, want one each", calls)
	}
	if m := inner.maxFlight.Load(); m > 1 {
		t.Errorf("%d calls at once, want 1 (MaxInFlight)", m)
	}
}

// An eager batcher sends a lone caller's text at once (no Window), and
// callers that come while its one slot is busy share the next call.
func TestBatchEncoderEagerGathersOnlyWhileBusy(t *testing.T) {
	inner := &countingEncoder{delay: 20 * time.Millisecond}
	b := scoring.Batched(inner, scoring.BatchConfig{Window: time.Hour, MaxBatch: 32, Eager: true})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.Encode(ctx, []string{"alone"}); err != nil {
		t.Fatalf("a lone caller waited for the window: %v", err)
	}
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := fmt.Sprintf("q%d", i)
			got, err := b.Encode(ctx, []string{text})
			want, _ := (&countingEncoder{}).Encode(context.Background(), []string{text})
			if err != nil || got[0][0] != want[0][0] || got[0][1] != want[0][1] {
				t.Errorf("%s: %v %v, want %v", text, got, err, want)
			}
		}()
	}
	wg.Wait()
	calls, texts := b.Stats()
	if texts != 13 || calls > 6 {
		t.Errorf("%d calls for %d texts: the callers that came while the slot was busy did not share calls", calls, texts)
	}
	t.Logf("%d calls for %d texts", calls, texts)
}
