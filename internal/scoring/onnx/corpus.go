package onnx

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/dmar-kg/dmar/internal/progress"
)

// corpusWindow is how many texts EncodeCorpus tokenises, sorts by length and
// cuts into batches at a time: enough that a batch holds texts of nearly one
// length (so little padding is computed), few enough that the model starts
// at once and the next window is tokenised while it runs. A variable so that
// tests can make windows small.
var corpusWindow = 2048

// corpusMin is the fewest texts for which EncodeCorpus opens a session of
// its own (about a second of set-up, and the model's weights once more in
// memory while it runs); fewer go to Encode. A variable for tests.
var corpusMin = 256

// cpuCorpusBatch caps the texts of one EncodeCorpus model call on CPU: with
// length-sorted batches, big ones save no padding, and small ones keep a
// layer's activations in cache and the progress meter moving (bench embed
// on the shared machine: 22.5-25.6 documents per CPU second at 8, 22.5 at
// 32, 21.6 at 64: within its noise, so no loss).
const cpuCorpusBatch = 8

// corpusBatch is one model call of EncodeCorpus: the texts' input positions
// and their tokens.
type corpusBatch struct {
	idx  []int
	rows [][]int64
}

// EncodeCorpus embeds many texts (a corpus at load time) and returns their
// vectors in input order, equal to Encode's within float rounding. It is
// faster than Encode on large inputs in three ways:
//   - texts are sorted by token length within windows of corpusWindow, so
//     no batch pads short texts to a long one, and on CPU a call takes at
//     most cpuCorpusBatch of them;
//   - a goroutine tokenises the next window while the model runs;
//   - on CPU it runs Config.Threads() single-threaded model calls at once on
//     a session of its own, instead of one call whose threads meet at every
//     operator: independent calls keep the cores busy when other processes
//     take one of them for a while, where a shared call waits for its
//     slowest thread. On CUDA it uses the encoder's session, two calls at
//     once so that tensors are prepared while the GPU runs.
//
// m, when not nil, counts documents as their batches finish (rate and ETA).
// The first error, or ctx's end, stops every stage.
func (e *Encoder) EncodeCorpus(ctx context.Context, texts []string, m *progress.Meter) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	if len(texts) < corpusMin {
		// Too few to repay a session of its own: one sorted Encode.
		vecs, err := e.Encode(ctx, texts)
		if err == nil && m != nil {
			m.Add(len(texts))
		}
		return vecs, err
	}
	sess, workers, closeSess, err := e.corpusSession()
	if err != nil {
		return nil, err
	}
	defer closeSess()
	size := e.batch
	if e.rt.Config().Device != CUDA {
		size = min(size, cpuCorpusBatch)
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	batches := make(chan corpusBatch, 2*workers)
	go func() {
		defer close(batches)
		e.tokenizeWindows(ctx, texts, size, batches)
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range batches {
				if ctx.Err() != nil {
					continue // drain, so the tokeniser is not left blocked
				}
				vecs, err := e.run(sess, b.rows)
				if err != nil {
					cancel(fmt.Errorf("encode corpus: a batch of %d texts (input %d among them): %w", len(b.idx), b.idx[0], err))
					continue
				}
				for j, i := range b.idx {
					out[i] = vecs[j]
				}
				if m != nil {
					m.Add(len(b.idx))
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

// tokenizeWindows sends texts as batches of at most size texts of similar
// token length, window by window, until done or ctx ends.
func (e *Encoder) tokenizeWindows(ctx context.Context, texts []string, size int, batches chan<- corpusBatch) {
	for lo := 0; lo < len(texts); lo += corpusWindow {
		hi := min(lo+corpusWindow, len(texts))
		ids := make([][]int64, hi-lo)
		order := make([]int, hi-lo)
		for i := range ids {
			if i%256 == 0 && ctx.Err() != nil {
				return
			}
			ids[i] = e.tokens(texts[lo+i])
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int { return len(ids[a]) - len(ids[b]) })
		for s := 0; s < len(order); s += size {
			chunk := order[s:min(s+size, len(order))]
			b := corpusBatch{idx: make([]int, len(chunk)), rows: make([][]int64, len(chunk))}
			for j, i := range chunk {
				b.idx[j], b.rows[j] = lo+i, ids[i]
			}
			select {
			case batches <- b:
			case <-ctx.Done():
				return
			}
		}
	}
}

// corpusSession returns the session EncodeCorpus runs on, how many calls run
// at once, and what frees the session afterwards.
func (e *Encoder) corpusSession() (*Session, int, func(), error) {
	if e.rt == nil || e.model == "" {
		return nil, 0, nil, errors.New("encode corpus: the encoder has no model file")
	}
	cfg := e.rt.Config()
	if cfg.Device == CUDA {
		return e.sess, 2, func() {}, nil
	}
	workers := cfg.Threads()
	if workers == 1 && cfg.IntraOpThreads == 1 {
		return e.sess, 1, func() {}, nil
	}
	// A session of its own: e's serves queries with the configured
	// threads, meanwhile, and keeps them.
	s, err := e.rt.withThreads(1).NewSession(e.model, e.inputs, []string{e.outName})
	if err != nil {
		return nil, 0, nil, fmt.Errorf("encode corpus: %w", err)
	}
	return s, workers, func() { _ = s.Close() }, nil
}
