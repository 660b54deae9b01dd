package onnx

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/scoring"
)

var _ scoring.Encoder = (*Background)(nil)

// Background embeds as the encoder it was made from does (the same tokens,
// prefix, truncation, version and identity, so stored vectors and caches
// cannot tell them apart), for work that must not slow searches down: the
// embedding of live documents at write time. On CPU its model calls run on
// a session of their own with one intra-op thread (so ONNX Runtime starts no
// threads of its own, which would run at normal priority), each on one of a
// few OS threads whose scheduling priority is lowered (nice 19 on Linux).
// Whenever a search and a write are both ready to run, the kernel runs the
// search; when no search runs, writes have every core as before.
//
// Safe for concurrent use; Close stops its threads and frees its session.
type Background struct {
	e       *Encoder
	sess    *Session
	own     bool // sess is Background's to close
	size    int  // most texts per model call
	workers int
	jobs    chan bgJob
	wg      sync.WaitGroup
	lowered atomic.Int32 // workers whose priority the OS lowered
	lowErr  atomic.Pointer[error]

	mu     sync.RWMutex // Encode holds it to read; Close to write
	closed bool
}

// bgJob is one model call and where its result goes.
type bgJob struct {
	ctx  context.Context
	at   int // first position of the call's texts in the batch order
	rows [][]int64
	res  chan<- bgResult
}

type bgResult struct {
	at   int
	vecs [][]float32
	err  error
}

// backgroundNice is the workers' nice value, the lowest: the kernel gives a
// normal thread about 98% of a core both want (CFS weights 1024 against
// 15; SCHED_IDLE's is 3). Where the kernel groups processes (autogroup) it
// only orders the process's own threads against each other, so writes
// still get the process's share of the machine when no search runs.
// SCHED_IDLE goes further: a CPU running only such threads counts as idle
// when the kernel places any waking thread, the machine's included.
const backgroundNice = 19

// Background returns a background encoder over e with workers model calls
// at once (0: Config.Threads(), one per core by default), its threads at
// nice 19 and, when idle, SCHED_IDLE. On CUDA it runs on e's session at
// normal priority: the GPU does the work and the calling threads mostly
// wait.
func (e *Encoder) Background(workers int, idle bool) (*Background, error) {
	if e.rt == nil || e.model == "" {
		return nil, errors.New("background encoder: the encoder has no model file")
	}
	if workers <= 0 {
		workers = e.rt.Config().Threads()
	}
	b := &Background{e: e, sess: e.sess, size: e.batch, workers: workers, jobs: make(chan bgJob)}
	if e.rt.Config().Device != CUDA {
		// One intra-op thread: the call runs on the worker's own (lowered)
		// thread; small calls keep every worker busy on a small batch.
		s, err := e.rt.withThreads(1).NewSession(e.model, e.inputs, []string{e.outName})
		if err != nil {
			return nil, fmt.Errorf("background encoder: %w", err)
		}
		b.sess, b.own, b.size = s, true, min(e.batch, cpuCorpusBatch)
	}
	lower := e.rt.Config().Device != CUDA
	started := make(chan struct{}, workers)
	for range workers {
		b.wg.Add(1)
		go b.work(lower, idle, started)
	}
	for range workers {
		<-started
	}
	return b, nil
}

// work runs model calls on an OS thread of its own. It never unlocks the
// thread: the goroutine ends locked, so the Go runtime ends the thread
// rather than reuse it with a lowered priority (which an unprivileged
// process cannot raise again).
func (b *Background) work(lower, idle bool, started chan<- struct{}) {
	defer b.wg.Done()
	runtime.LockOSThread()
	if lower {
		if err := lowerThreadPriority(backgroundNice, idle); err != nil {
			b.lowErr.Store(&err)
		} else {
			b.lowered.Add(1)
		}
	}
	started <- struct{}{}
	for j := range b.jobs {
		r := bgResult{at: j.at}
		if r.err = j.ctx.Err(); r.err == nil {
			r.vecs, r.err = b.e.run(b.sess, j.rows)
		}
		j.res <- r // buffered for every call of the batch: never blocks
	}
}

// Lowered says how many of the workers run at the lowered priority, and
// why the others do not (nil when all do).
func (b *Background) Lowered() (int, error) {
	if p := b.lowErr.Load(); p != nil {
		return int(b.lowered.Load()), *p
	}
	return int(b.lowered.Load()), nil
}

// Encode embeds texts; vectors have unit length and equal the encoder's
// within float rounding (texts are batched by length as Encode does).
func (b *Background) Encode(ctx context.Context, texts []string) ([][]float32, error) {
	return b.encode(ctx, texts, nil)
}

// EncodeCorpus is Encode counting documents on m, so that corpus.Prepare
// links a whole batch before embedding it, as with the encoder.
func (b *Background) EncodeCorpus(ctx context.Context, texts []string, m *progress.Meter) ([][]float32, error) {
	return b.encode(ctx, texts, m)
}

func (b *Background) encode(ctx context.Context, texts []string, m *progress.Meter) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	ids := make([][]int64, len(texts))
	order := make([]int, len(texts))
	for i, s := range texts {
		ids[i], order[i] = b.e.tokens(s), i
	}
	slices.SortStableFunc(order, func(a, c int) int { return len(ids[a]) - len(ids[c]) })
	// As many calls as workers at least, so that a small write uses every
	// core when nothing else runs.
	size := max(1, min(b.size, (len(texts)+b.workers-1)/b.workers))
	calls := (len(order) + size - 1) / size
	res := make(chan bgResult, calls)

	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return nil, errors.New("background encoder: closed")
	}
	sent := 0
	for lo := 0; lo < len(order); lo += size {
		chunk := order[lo:min(lo+size, len(order))]
		rows := make([][]int64, len(chunk))
		for j, i := range chunk {
			rows[j] = ids[i]
		}
		select {
		case b.jobs <- bgJob{ctx: ctx, at: lo, rows: rows, res: res}:
			sent++
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	b.mu.RUnlock()
	var first error
	for range sent {
		r := <-res
		if r.err != nil {
			if first == nil {
				first = fmt.Errorf("background encoder: %d texts: %w", len(texts), r.err)
			}
			continue
		}
		for j, v := range r.vecs {
			out[order[r.at+j]] = v
		}
		if m != nil {
			m.Add(len(r.vecs))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if first != nil {
		return nil, first
	}
	return out, nil
}

// Dim is the encoder's.
func (b *Background) Dim() int { return b.e.Dim() }

// Version is the encoder's, so that stored vectors name the same model.
func (b *Background) Version() string { return b.e.Version() }

// Identity is the encoder's.
func (b *Background) Identity() string { return b.e.Identity() }

// Close stops the workers (after the calls under way) and frees the
// session; it does not close the encoder Background was made from.
func (b *Background) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	close(b.jobs)
	b.mu.Unlock()
	b.wg.Wait()
	if b.own {
		return b.sess.Close()
	}
	return nil
}
