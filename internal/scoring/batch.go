package scoring

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// BatchConfig bounds the micro-batching of BatchEncoder.
type BatchConfig struct {
	// Window is how long the first text of a batch waits for others
	// before the batch is sent (0: 2 ms).
	Window time.Duration
	// MaxBatch is the most texts one model call gets; a batch that fills
	// is sent at once, and a call with more texts than this is not batched
	// (0: 32).
	MaxBatch int
	// PerCaller keeps each caller's texts in a model call of their own
	// (batches still queue for the call slots): for an encoder whose vectors
	// depend on the texts sharing a call (onnx EncoderSpec.PerText), so that
	// a request's vectors never depend on concurrent requests. A caller
	// then waits for a slot only, not for the Window.
	PerCaller bool
	// Eager sends a batch as soon as a call slot is free instead of after
	// the Window: a lone caller waits for nothing, and callers gather only
	// while every slot is busy (under load).
	Eager bool
	// MaxInFlight bounds concurrent model calls (0: 1). Texts that arrive
	// while every slot is busy wait in the next batch, so under load the
	// batches grow instead of the calls competing for the same cores.
	MaxInFlight int
}

// BatchEncoder is an Encoder decorator that merges the small Encode calls
// of concurrent requests (a query each) into one model call: the first text
// to arrive opens a batch, which is sent after Window, when it holds
// MaxBatch texts, or (when every call slot is busy) as soon as a slot frees.
// A caller whose context ends while it waits returns the context's error
// at once; the model call runs under a context that ends only when every
// caller in the batch has gone. No lock is held during a model call.
type BatchEncoder struct {
	Encoder
	cfg   BatchConfig
	slots chan struct{}

	mu      sync.Mutex
	pending []*batchItem
	timer   *time.Timer // set while a batch waits for its window

	calls, texts     atomic.Int64 // batched model calls and the texts they held
	batches, callers atomic.Int64 // batches sent and the callers they held
}

// Stats reports how many model calls the batches made and how many texts
// they held (texts/calls is the mean batch size).
func (b *BatchEncoder) Stats() (calls, texts int64) { return b.calls.Load(), b.texts.Load() }

// Grouping says how many batches were sent and how many callers they held
// (with PerCaller each caller still gets a model call of its own).
func (b *BatchEncoder) Grouping() (batches, callers int64) { return b.batches.Load(), b.callers.Load() }

type batchItem struct {
	ctx   context.Context
	texts []string
	done  chan batchResult // buffered: the sender never blocks
}

type batchResult struct {
	vecs [][]float32
	err  error
}

// Batched wraps enc; see BatchEncoder.
func Batched(enc Encoder, cfg BatchConfig) *BatchEncoder {
	if cfg.Window <= 0 {
		cfg.Window = 2 * time.Millisecond
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 32
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 1
	}
	return &BatchEncoder{Encoder: enc, cfg: cfg, slots: make(chan struct{}, cfg.MaxInFlight)}
}

// Encode implements Encoder.
func (b *BatchEncoder) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 || len(texts) > b.cfg.MaxBatch {
		return b.Encoder.Encode(ctx, texts)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	it := &batchItem{ctx: ctx, texts: texts, done: make(chan batchResult, 1)}
	b.mu.Lock()
	b.pending = append(b.pending, it)
	full := pendingTexts(b.pending) >= b.cfg.MaxBatch
	switch {
	case full:
		if b.timer != nil {
			b.timer.Stop()
			b.timer = nil
		}
		go b.flush()
	case b.cfg.PerCaller || b.cfg.Eager:
		// The first waiting caller's flush goes for a slot now, and callers
		// that come while every slot is busy join it (with PerCaller each
		// gets a call of its own, so waiting for others would buy nothing).
		if len(b.pending) == 1 {
			go b.flush()
		}
	case b.timer == nil:
		b.timer = time.AfterFunc(b.cfg.Window, b.flush)
	}
	b.mu.Unlock()
	select {
	case r := <-it.done:
		return r.vecs, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func pendingTexts(items []*batchItem) int {
	n := 0
	for _, it := range items {
		n += len(it.texts)
	}
	return n
}

// flush waits for a call slot, then takes at most MaxBatch texts' worth of
// waiting callers and runs them in one model call. What is left gets its
// own flush.
func (b *BatchEncoder) flush() {
	b.slots <- struct{}{}
	defer func() { <-b.slots }()
	b.mu.Lock()
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	var batch []*batchItem
	n := 0
	rest := b.pending[:0:0]
	for _, it := range b.pending {
		switch {
		case it.ctx.Err() != nil:
			// Its caller has returned already.
		case n+len(it.texts) <= b.cfg.MaxBatch:
			batch = append(batch, it)
			n += len(it.texts)
		default:
			rest = append(rest, it)
		}
	}
	b.pending = rest
	if len(rest) > 0 {
		go b.flush()
	}
	b.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	b.run(batch, n)
}

// run encodes the batch's texts, in one model call or a few by length
// (lengthGroups), and hands each caller its rows.
func (b *BatchEncoder) run(batch []*batchItem, n int) {
	ctx, release := anyAlive(batch)
	defer release()
	texts := make([]string, 0, n)
	for _, it := range batch {
		texts = append(texts, it.texts...)
	}
	b.texts.Add(int64(len(texts)))
	b.batches.Add(1)
	b.callers.Add(int64(len(batch)))
	if b.cfg.PerCaller {
		for _, it := range batch { // each under its own context: a caller gone costs no model call
			b.calls.Add(1)
			vecs, err := b.Encoder.Encode(it.ctx, it.texts)
			it.done <- batchResult{vecs: vecs, err: err}
		}
		return
	}
	vecs, err := b.encodeByLength(ctx, texts)
	off := 0
	for _, it := range batch {
		r := batchResult{err: err}
		if err == nil {
			r.vecs = vecs[off : off+len(it.texts) : off+len(it.texts)]
		} else if ctxErr := it.ctx.Err(); ctxErr != nil && errors.Is(err, context.Canceled) {
			r.err = ctxErr
		}
		off += len(it.texts)
		it.done <- r
	}
}

// encodeByLength encodes texts in one call per lengthGroups group: a model
// call pads every text to its longest, so under load a batch of short
// questions and long reformulated queries spent most of its work on
// padding. Each text's vector is the same as in any other batch, up to the
// model's float rounding (padding is masked).
func (b *BatchEncoder) encodeByLength(ctx context.Context, texts []string) ([][]float32, error) {
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return len(texts[x]) - len(texts[y]) })
	lens := make([]int, len(order))
	for i, t := range order {
		lens[i] = len(texts[t])
	}
	out := make([][]float32, len(texts))
	lo := 0
	for _, hi := range lengthGroups(lens, callOverhead) {
		group := make([]string, hi-lo)
		for i, t := range order[lo:hi] {
			group[i] = texts[t]
		}
		b.calls.Add(1)
		vecs, err := b.Encoder.Encode(ctx, group)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(group) {
			return nil, fmt.Errorf("batched encoder: %d vectors for %d texts", len(vecs), len(group))
		}
		for i, t := range order[lo:hi] {
			out[t] = vecs[i]
		}
		lo = hi
	}
	return out, nil
}

// callOverhead is what one more model call costs, in the units of
// lengthGroups (bytes of padded text): about one long query's row, so a
// batch splits only where padding would cost more than the extra call.
const callOverhead = 256

// lengthGroups splits ascending lengths into consecutive groups, returning
// each group's end, so that the padded work Σ rows·longest plus overhead a
// group is least (an exact dynamic programme; batches are small).
func lengthGroups(lens []int, overhead int) []int {
	n := len(lens)
	cost := make([]int, n+1) // cost[j]: the least for lens[:j]
	from := make([]int, n+1) // where the last group of that best starts
	for j := 1; j <= n; j++ {
		cost[j] = -1
		for i := 0; i < j; i++ {
			c := cost[i] + (j-i)*lens[j-1] + overhead
			if cost[j] < 0 || c < cost[j] {
				cost[j], from[j] = c, i
			}
		}
	}
	var ends []int
	for j := n; j > 0; j = from[j] {
		ends = append(ends, j)
	}
	slices.Reverse(ends)
	return ends
}

// anyAlive is a context that ends when every item's context has ended, so
// that one caller leaving does not cancel the others' work; release frees it.
func anyAlive(batch []*batchItem) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	stops := make([]func() bool, len(batch))
	for i, it := range batch {
		wg.Add(1)
		stops[i] = context.AfterFunc(it.ctx, wg.Done)
	}
	go func() {
		wg.Wait()
		cancel()
	}()
	return ctx, func() {
		for _, stop := range stops {
			if stop() {
				wg.Done()
			}
		}
		cancel()
	}
}
