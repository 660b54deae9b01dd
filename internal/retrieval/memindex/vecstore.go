package memindex

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/vec"
)

// Compact vectors (Params.CompactVectors): each document keeps in memory
// its vector's int8 code (vec.Int8, a quarter of float32's bytes) and its
// float32 norm, and the float32 vector goes to an append-only file that
// every generation of the index shares. Searches rank with the codes and
// score their best candidates again with the float32 vectors read back
// (pread, not mmap, so that the vectors stay out of the process's
// resident memory), with the same sums as the float32 index: the scores
// returned are its scores to the bit. A document rewritten or deleted
// leaves its old record unused in the file; the file lives as long as the
// index (Close).

// cvec is one slot's compact vector; the zero value is a slot without one.
type cvec struct {
	code vec.Int8
	norm float64 // of the float32 vector, as vec.Norm computes it
	off  int64   // of its record in the vector file
}

func (c *cvec) dim() int { return len(c.code.Codes) }

// vecStore is the append-only file of float32 vectors. A record is the
// vector's components, little-endian float32, then the CRC-32C of those
// bytes, so that a damaged file reads as an error rather than as scores.
type vecStore struct {
	dir    string
	mu     sync.Mutex              // appends: reserving offsets, opening the file
	f      atomic.Pointer[os.File] // read without the lock
	size   int64
	path   string // removed at Close when it could not be removed at once
	closed bool   // under mu
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func recordBytes(dim int) int { return 4*dim + 4 }

// open creates the file on first use. It is unlinked at once where the
// system allows it, so that a process that ends without Close leaves
// nothing behind.
func (s *vecStore) open() error {
	if s.closed {
		return errors.New("memindex: vector file: the index is closed")
	}
	if s.f.Load() != nil {
		return nil
	}
	dir := s.dir
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, "dmar-vectors-*")
	if err != nil {
		return fmt.Errorf("memindex: vector file: %w", err)
	}
	s.f.Store(f)
	if os.Remove(f.Name()) != nil {
		s.path = f.Name()
	}
	return nil
}

// appendDocs writes the vectors of docs (until ctx ends) and returns each one's compact
// form (the zero cvec for a document without a vector).
func (s *vecStore) appendDocs(ctx context.Context, docs []retrieval.Document) ([]cvec, error) {
	out := make([]cvec, len(docs))
	// Records are written a chunk at a time, a few megabytes each.
	const chunk = 2048
	var buf []byte
	for lo := 0; lo < len(docs); lo += chunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+chunk, len(docs))
		buf = buf[:0]
		for i, d := range docs[lo:hi] {
			if len(d.Vector) == 0 {
				continue
			}
			out[lo+i] = cvec{code: vec.Quantize(d.Vector), norm: vec.Norm(d.Vector), off: int64(len(buf))}
			start := len(buf)
			for _, f := range d.Vector {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
			}
			buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf[start:], crcTable))
		}
		if len(buf) == 0 {
			continue
		}
		base, err := s.write(buf)
		if err != nil {
			return nil, err
		}
		for i := lo; i < hi; i++ {
			if out[i].dim() > 0 {
				out[i].off += base
			}
		}
	}
	return out, nil
}

// write appends b and returns its offset.
func (s *vecStore) write(b []byte) (int64, error) {
	s.mu.Lock()
	if err := s.open(); err != nil {
		s.mu.Unlock()
		return 0, err
	}
	off := s.size
	s.size += int64(len(b))
	f := s.f.Load()
	s.mu.Unlock()
	// Offsets are reserved under the lock; writers then write apart.
	if _, err := f.WriteAt(b, off); err != nil {
		return 0, fmt.Errorf("memindex: write vector file: %w", err)
	}
	return off, nil
}

// read returns c's float32 vector in buf (grown when short).
func (s *vecStore) read(c *cvec, buf []float32, raw []byte) ([]float32, []byte, error) {
	n := recordBytes(c.dim())
	if cap(raw) < n {
		raw = make([]byte, n)
	}
	raw = raw[:n]
	f := s.f.Load()
	if f == nil {
		return nil, raw, errors.New("memindex: read vector: the vector file is closed")
	}
	if _, err := f.ReadAt(raw, c.off); err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("the file ends before the record's %d bytes (truncated?): %w", n, io.ErrUnexpectedEOF)
		}
		return nil, raw, fmt.Errorf("memindex: read vector at offset %d: %w", c.off, err)
	}
	body := raw[:n-4]
	if crc32.Checksum(body, crcTable) != binary.LittleEndian.Uint32(raw[n-4:]) {
		return nil, raw, fmt.Errorf("memindex: vector at offset %d of the vector file is corrupt (checksum mismatch)", c.off)
	}
	if cap(buf) < c.dim() {
		buf = make([]float32, c.dim())
	}
	buf = buf[:c.dim()]
	for i := range buf {
		buf[i] = math.Float32frombits(binary.LittleEndian.Uint32(body[4*i:]))
	}
	return buf, raw, nil
}

// close closes the file (and removes it, where it was not removed when
// made).
func (s *vecStore) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	f := s.f.Swap(nil)
	if f == nil {
		return nil
	}
	err := f.Close()
	if s.path != "" {
		if rerr := os.Remove(s.path); rerr != nil && err == nil {
			err = rerr
		}
	}
	s.path = ""
	if err != nil {
		return fmt.Errorf("memindex: close vector file: %w", err)
	}
	return nil
}

// dotI8 is a·b for two codes' components, exactly (in int32).
func dotI8(a, b []int8) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += int32(a[i]) * int32(b[i])
		s1 += int32(a[i+1]) * int32(b[i+1])
		s2 += int32(a[i+2]) * int32(b[i+2])
		s3 += int32(a[i+3]) * int32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += int32(a[i]) * int32(b[i])
	}
	return s0 + s1 + s2 + s3
}

// exactAll is the exact float32 scan's top k for each query of dimension
// dim (nil for the others), reading each vector from the file once, a
// part of the slots per CPU: the reference the graph's recall is measured
// against.
func (x *gen) exactAll(ctx context.Context, queries [][]float32, dim, k int) ([][]scoredDoc, error) {
	norms := x.norms()
	qns := make([]float64, len(queries))
	for i, q := range queries {
		if len(q) == dim {
			qns[i] = vec.Norm(q)
		}
	}
	parts := min(runtime.GOMAXPROCS(0), max(len(x.docs)/64, 1))
	tops := make([][]*best[scoredDoc], parts)
	failed := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*len(x.docs)/parts, (p+1)*len(x.docs)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			tops[p], failed[p] = x.exactPart(ctx, queries, qns, norms, k, lo, hi)
		}()
	}
	wg.Wait()
	if err := errors.Join(failed...); err != nil {
		return nil, err
	}
	out := make([][]scoredDoc, len(queries))
	for qi, qn := range qns {
		if qn == 0 {
			continue
		}
		top := newBest(k, x.better, nil)
		for p := range parts {
			for _, s := range tops[p][qi].h {
				top.push(s)
			}
		}
		out[qi] = top.sorted()
	}
	return out, nil
}

// exactPart is exactAll over the slots [lo, hi).
func (x *gen) exactPart(ctx context.Context, queries [][]float32, qns, norms []float64, k, lo, hi int) ([]*best[scoredDoc], error) {
	tops := make([]*best[scoredDoc], len(queries))
	for qi := range queries {
		tops[qi] = newBest(k, x.better, nil)
	}
	var r vecReader
	for i := lo; i < hi; i++ {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if norms[i] == 0 || x.vecs[i].dim() == 0 {
			continue
		}
		f, err := x.float32At(i, &r)
		if err != nil {
			return nil, err
		}
		for qi, q := range queries {
			if qns[qi] != 0 && len(f) == len(q) {
				tops[qi].push(scoredDoc{doc: int32(i), score: float64(vec.Dot(q, f)) / (qns[qi] * norms[i])})
			}
		}
	}
	return tops, nil
}
