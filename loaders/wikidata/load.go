// Package wikidata streams a Wikidata JSON dump (latest-all.json, plain,
// gzip or bzip2) into a kg.Sink: items become kg.Entity, truthy
// item-valued statements become kg.Triple, properties become kg.Relation.
//
// The dump is one entity per line between "[" and "]" lines, each line but
// the last ending in a comma; the reader also takes a UTF-8 byte order mark,
// "[" or "]" on an entity's line, and several entities on one line (a dump
// written as a one-line array). Real dumps and samples are often cut off: a
// compressed stream that ends inside the file loads what came before and
// reports the last complete entity, while a checksum failure, corrupt data
// or trailing garbage after the stream fails the load. Lines
// are parsed in parallel by Workers goroutines and handed to the sink in dump
// order, so the output is the same for any number of workers. Memory is
// bounded by the batches in flight (a few MB per worker) plus, in seed mode,
// the neighbourhood's QIDs. A line that does not parse is counted, logged with
// its byte offset in the uncompressed dump, and skipped.
//
// Seeds plus hops over a dump takes Hops+1 passes: pass k reads the whole
// dump and adds the neighbours (either direction) of the frontier found by
// pass k-1; the last pass writes the entities within Hops of a seed and the
// triples between two of them (the induced subgraph).
package wikidata

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/loaders/internal/qidset"
)

func qidNum(q string) uint32 {
	n, _ := qidset.Num(q) // ParseLine validated it
	return n
}

// Options configures Load. The zero value loads every item with English
// labels and every item-valued statement, on all cores.
type Options struct {
	Filter
	// ItemsOnly skips property entities too (lexemes and media are always
	// skipped); otherwise properties are written as relations.
	ItemsOnly bool
	// Seeds, when set, restricts the load to the entities within Hops of them.
	Seeds []string
	Hops  int
	// PropertiesTSV is a "PID<TAB>label" file written as relations before the
	// dump ("" for none). Load fails, naming it, when it is missing or holds
	// no labelled PID.
	PropertiesTSV string
	Workers       int // parsing goroutines; 0 means GOMAXPROCS
	// Decompress picks the gzip/bzip2 reader: "go" (Go's own), "external"
	// (pigz/gzip or lbzip2/pbzip2/bzip2 from PATH, in their own process; an
	// error if none is found) or "auto"/"" (external when found, else Go).
	// An external decompressor runs beside the parsers instead of sharing
	// the reading goroutine, and Go's bzip2 is several times slower.
	Decompress string
	// MaxLine bounds one line; longer lines are counted bad. 0 means 256 MiB.
	MaxLine int
	// Progress receives a status line every ProgressEvery (default 2s).
	Progress      io.Writer
	ProgressEvery time.Duration
	// Log receives one line per bad line (nil: none).
	Log io.Writer
	// AllowTruncated loads what a cut-off dump holds before the cut (its
	// Stats say where); without it a cut-off dump fails the load, so that
	// a sink that keeps its earlier output keeps it.
	AllowTruncated bool
}

// Stats is what a load did. Counts covers entity lines (the framing lines
// are not counted): Read = Loaded + Filtered + Bad, over the final pass.
type Stats struct {
	kg.Counts
	Triples   int   `json:"triples"`
	Relations int   `json:"relations"` // from PropertiesTSV and property entities
	Bytes     int64 `json:"bytes"`     // uncompressed bytes of the final pass
	Passes    int   `json:"passes"`
	// Truncated is set when the compressed stream itself was cut off.
	Truncated   bool   `json:"truncated,omitempty"`
	TruncatedBy string `json:"truncated_by,omitempty"` // the decompressor's complaint and where the good data ends
	// LastEntity and LastEntityAt name, for a cut-off stream, the last
	// complete entity and the byte offset (in the uncompressed dump) of its
	// line: everything up to and including it was read.
	LastEntity   string        `json:"last_entity,omitempty"`
	LastEntityAt int64         `json:"last_entity_at,omitempty"`
	Elapsed      time.Duration `json:"elapsed"`
}

const maxProblems = 10

func (st *Stats) bad(off int64, err error, log io.Writer) {
	st.Bad++
	msg := fmt.Sprintf("byte %d: %v", off, err)
	if len(st.Problems) < maxProblems {
		st.Problems = append(st.Problems, msg)
	}
	if log != nil {
		fmt.Fprintln(log, "wikidata: bad line at", msg)
	}
}

func (o *Options) validate() error {
	for _, q := range o.Seeds {
		if !kg.ValidQID(q) {
			return fmt.Errorf("seed %q is not a QID", q)
		}
	}
	switch o.Decompress {
	case "", "auto", "go", "external":
	default:
		return fmt.Errorf("decompress %q: want auto, go or external", o.Decompress)
	}
	if o.Hops < 0 {
		return fmt.Errorf("hops %d is negative", o.Hops)
	}
	for p := range o.Properties {
		if !kg.ValidPID(p) {
			return fmt.Errorf("property %q is not a PID", p)
		}
	}
	return nil
}

// Load reads the dump at path into sink and closes the sink. When the load
// fails, a sink that implements kg.Aborter is aborted instead of closed, so a
// failed run never replaces the output of a good one.
func Load(ctx context.Context, path string, sink kg.Sink, o Options) (st Stats, err error) {
	start := time.Now()
	defer func() {
		st.Elapsed = time.Since(start)
		err = kg.Finish(ctx, sink, err)
	}()
	if err := o.validate(); err != nil {
		return st, err
	}
	if err := writePropertiesTSV(ctx, sink, o.PropertiesTSV, &st); err != nil {
		return st, err
	}
	var inSet map[string]bool
	if len(o.Seeds) > 0 {
		inSet, err = expand(ctx, path, o, &st)
		if err != nil {
			return st, err
		}
	}
	c := &collector{sink: sink, itemsOnly: o.ItemsOnly, inSet: inSet, st: &st, seenP: map[string]bool{}}
	pass := st.Passes + 1
	err = scan(ctx, path, o, fmt.Sprintf("pass %d/%d", pass, pass), &st, c.add, func() error { return c.flush(ctx) })
	st.Passes = pass
	if err == nil {
		err = st.cutOff(path, o)
	}
	return st, err
}

// writePropertiesTSV writes the relations of the labels file at path ("":
// none), before the dump's.
func writePropertiesTSV(ctx context.Context, sink kg.Sink, path string, st *Stats) error {
	if path == "" {
		return nil
	}
	rels, err := ReadPropertiesTSV(path)
	if err != nil {
		return err
	}
	if err := sink.WriteRelations(ctx, rels); err != nil {
		return fmt.Errorf("write relations: %w", err)
	}
	st.Relations += len(rels)
	return nil
}

// collector turns the final pass's entities into what the sink takes, and
// hands each batch's share to it.
type collector struct {
	sink      kg.Sink
	itemsOnly bool
	inSet     map[string]bool // the neighbourhood; nil: every item
	st        *Stats
	seen      qidset.Set
	seenP     map[string]bool
	ents      []kg.Entity
	trs       []kg.Triple
	rels      []kg.Relation
}

// add keeps an item with its statements (both limited to the neighbourhood
// when there is one) or a property as a relation; it counts the rest,
// repeats included, as filtered.
func (c *collector) add(r *result) error {
	e, st := &r.ent, c.st
	switch {
	case e.Type == "property" && !c.itemsOnly && e.ID[0] == 'P':
		if c.seenP[e.ID] {
			st.Filtered++ // the same property twice: the first one stands
			return nil
		}
		c.seenP[e.ID] = true
		c.rels = append(c.rels, kg.Relation{PID: e.ID, Label: e.Label, Description: e.Description})
		st.Relations++
	case e.Type != "item" || e.ID[0] != 'Q':
		st.Filtered++
		return nil
	case c.inSet != nil && !c.inSet[e.ID]:
		st.Filtered++
		return nil
	case !c.seen.Add(qidNum(e.ID)):
		st.Filtered++ // the same item twice: the first one stands
		return nil
	default:
		label := e.Label
		if label == "" {
			label = e.ID
		}
		c.ents = append(c.ents, kg.Entity{QID: e.ID, Label: label, Aliases: e.Aliases, Description: e.Description})
		for _, cl := range e.Claims {
			if c.inSet == nil || c.inSet[cl.QID] {
				c.trs = append(c.trs, kg.Triple{Head: e.ID, PID: cl.PID, Tail: cl.QID})
			}
		}
	}
	st.Loaded++
	return nil
}

// flush is called after each batch, in order: it hands what the batch made
// to the sink.
func (c *collector) flush(ctx context.Context) error {
	if len(c.rels) > 0 {
		if err := c.sink.WriteRelations(ctx, c.rels); err != nil {
			return fmt.Errorf("write relations: %w", err)
		}
	}
	if len(c.ents) > 0 {
		if err := c.sink.WriteEntities(ctx, c.ents); err != nil {
			return fmt.Errorf("write entities: %w", err)
		}
	}
	if len(c.trs) > 0 {
		if err := c.sink.WriteTriples(ctx, c.trs); err != nil {
			return fmt.Errorf("write triples: %w", err)
		}
	}
	c.st.Triples += len(c.trs)
	c.ents, c.trs, c.rels = c.ents[:0], c.trs[:0], c.rels[:0]
	return nil
}

// TruncatedError is Load's error for a cut-off dump without
// Options.AllowTruncated: nothing was written.
type TruncatedError struct {
	Path  string
	Stats Stats
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("the dump %s is cut off: %s; nothing was written (an earlier output is kept). "+
		"Pass --allow-truncated to load what comes before the cut", e.Path, e.Stats.TruncatedBy)
}

// cutOff is the error for a cut-off dump at path unless o allows one.
func (st *Stats) cutOff(path string, o Options) error {
	if !st.Truncated || o.AllowTruncated {
		return nil
	}
	return &TruncatedError{Path: path, Stats: *st}
}

// expand runs the Hops neighbourhood passes and returns the entities within
// Hops of a seed.
func expand(ctx context.Context, path string, o Options, st *Stats) (map[string]bool, error) {
	in := map[string]bool{}
	frontier := map[string]bool{}
	for _, q := range o.Seeds {
		in[q], frontier[q] = true, true
	}
	for h := 1; h <= o.Hops && len(frontier) > 0; h++ {
		next := map[string]bool{}
		var scratch Stats
		err := scan(ctx, path, o, fmt.Sprintf("pass %d/%d (hop %d)", h, o.Hops+1, h), &scratch, func(r *result) error {
			e := &r.ent
			if e.Type != "item" {
				return nil
			}
			for _, c := range e.Claims {
				if frontier[e.ID] && !in[c.QID] {
					next[c.QID] = true
				}
				if frontier[c.QID] && !in[e.ID] {
					next[e.ID] = true
				}
			}
			return nil
		}, func() error { return nil })
		if err == nil && scratch.Truncated {
			// Fail before the passes to come.
			st.Truncated, st.TruncatedBy, st.LastEntity, st.LastEntityAt = true, scratch.TruncatedBy, scratch.LastEntity, scratch.LastEntityAt
			err = st.cutOff(path, o)
		}
		if err != nil {
			return nil, err
		}
		for q := range next {
			in[q] = true
		}
		frontier = next
		st.Passes++
	}
	return in, nil
}

// scan reads the dump once, parses lines on o.Workers goroutines and calls
// each for every good entity line and flush after every batch, both in dump
// order on the calling goroutine. Bad lines are counted in st, and a dump
// that is cut off (Stats.Truncated) says so in st.
func scan(ctx context.Context, path string, o Options, pass string, st *Stats, each func(*result) error, flush func() error) error {
	in, err := openDump(path, o.Decompress)
	if err != nil {
		return err
	}
	// A read-only input: what went wrong is the scan's error, not close's.
	defer func() { _ = in.close() }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := startParsers(ctx, in.r, &o)
	meter := newMeter(o.Progress, "load wikidata "+pass, in.size, o.ProgressEvery)
	var end ending
	err = p.inOrder(ctx, cancel, func(b *batch) error {
		n, err := deliver(b, st, &end, o.Log, each)
		if ferr := flush(); ferr != nil && err == nil {
			err = ferr
		}
		st.Bytes = b.end
		meter.update(st.Bytes, in.consumed.Load(), n)
		return err
	})
	meter.done(st.Bytes, in.consumed.Load())
	if err != nil {
		return err
	}
	if p.readErr != nil {
		// Only a true end of file inside the compressed stream is a cut-off
		// (lineReader notes it); a checksum failure, corrupt data or trailing
		// garbage is an error, even once the whole file has been read.
		return p.readErr
	}
	if err := end.streamCut(in, p.lr); err != nil {
		return err
	}
	end.report(st)
	return ctx.Err()
}

// parsers read a dump in batches of lines and parse them on worker
// goroutines; done yields the parsed batches in any order, each holding
// one of tokens until it is handed back.
type parsers struct {
	lr      *lineReader
	pool    *sync.Pool
	tokens  chan struct{}
	done    chan *batch
	readErr error // the reader's, set before it closes the workers' queue
}

// startParsers starts the reader and o.Workers parsers (0: GOMAXPROCS) on
// r; they stop when ctx is cancelled.
func startParsers(ctx context.Context, r io.Reader, o *Options) *parsers {
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	maxLine := o.MaxLine
	if maxLine <= 0 {
		maxLine = 256 << 20
	}
	p := &parsers{
		lr:     newLineReader(r, maxLine),
		pool:   &sync.Pool{New: func() any { return &batch{buf: make([]byte, 0, batchBytes+batchBytes/4)} }},
		tokens: make(chan struct{}, 2*workers+2), // bounds the batches in flight
		done:   make(chan *batch, 2*workers+2),
	}
	jobs := make(chan *batch, workers)
	go func() {
		// Closing jobs after readErr is set orders that write before scan's
		// read of it (jobs closed -> workers done -> done closed).
		p.readErr = readBatches(ctx, p.lr, p.pool, p.tokens, jobs)
		close(jobs)
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range jobs {
				b.out = b.out[:0]
				for _, l := range b.lines {
					b.out = parseRef(b.out, b.buf[l.start:l.end], l, &o.Filter)
				}
				p.done <- b
			}
		}()
	}
	go func() { wg.Wait(); close(p.done) }()
	return p
}

// inOrder calls handle on the parsed batches in dump order and recycles
// them. After the first error, or once ctx is done, it cancels the
// parsers, drains what is in flight and returns that error.
func (p *parsers) inOrder(ctx context.Context, cancel context.CancelFunc, handle func(*batch) error) error {
	pending := map[int]*batch{}
	nextSeq := 0
	var firstErr error
	for b := range p.done {
		if firstErr != nil {
			<-p.tokens
			continue
		}
		pending[b.seq] = b
		for {
			b, ok := pending[nextSeq]
			if !ok {
				break
			}
			delete(pending, nextSeq)
			nextSeq++
			firstErr = handle(b)
			b.out = b.out[:0]
			p.pool.Put(b)
			<-p.tokens
			if firstErr == nil {
				firstErr = ctx.Err()
			}
			if firstErr != nil {
				cancel()
				break
			}
		}
	}
	return firstErr
}

// deliver calls each for b's good entity lines, counting and logging the
// bad ones, and notes how the dump ends. It goes through the whole batch
// even after an error and returns the first, and n, the good lines.
func deliver(b *batch, st *Stats, end *ending, log io.Writer, each func(*result) error) (n int, firstErr error) {
	for i := range b.out {
		r := &b.out[i]
		end.note(r)
		switch {
		case r.framing:
			continue
		case r.err != nil:
			st.Read++
			st.bad(r.off, r.err, log)
			continue
		}
		st.Read++
		n++
		if err := each(r); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return n, firstErr
}

const (
	batchBytes = 1 << 20
	batchLines = 512
)

// readBatches splits the dump into batches of lines for the workers,
// taking a token for each, until the end of the dump or ctx is done.
func readBatches(ctx context.Context, lr *lineReader, pool *sync.Pool, tokens chan struct{}, jobs chan<- *batch) error {
	for seq := 0; ; seq++ {
		select {
		case tokens <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		b := pool.Get().(*batch)
		b.seq, b.buf, b.lines = seq, b.buf[:0], b.lines[:0]
		var err error
		for len(b.buf) < batchBytes && len(b.lines) < batchLines {
			var ref lineRef
			b.buf, ref, err = lr.next(b.buf)
			if err != nil {
				break
			}
			b.lines = append(b.lines, ref)
		}
		b.end = lr.off
		if len(b.lines) > 0 {
			jobs <- b
		} else {
			<-tokens
		}
		if err != nil {
			if err != io.EOF {
				return fmt.Errorf("read dump at byte %d: %w", lr.off, err)
			}
			return nil
		}
	}
}

// ending is how a dump ended, noted from its results in order: a dump is
// cut off when its compressed stream is (cutBy, the decompressor's
// complaint), when it opened its array and never closed it, or when its
// last line stops inside an entity.
type ending struct {
	cutBy               string
	opened, closed, cut bool
	lastID              string // the last entity line that parsed, and its offset
	lastOff             int64
}

func (e *ending) note(r *result) {
	e.opened = e.opened || r.opens
	e.closed = e.closed || r.closes
	e.cut = e.cut || r.cut
	if !r.framing && r.err == nil {
		e.lastID, e.lastOff = r.ent.ID, r.off
	}
}

// streamCut sets cutBy when the compressed stream itself was cut off, as
// the external decompressor or Go's reader (lr) saw it.
func (e *ending) streamCut(in *input, lr *lineReader) error {
	if in.wait != nil {
		truncated, err := in.wait()
		if err != nil {
			return fmt.Errorf("decompress: %w", err)
		}
		if truncated {
			e.cutBy = in.complaint
		}
	} else if lr.truncated {
		e.cutBy = fmt.Sprintf("%s (Go reader): %v", in.kind, lr.cutBy)
	}
	return nil
}

// report sets st's truncation fields.
func (e *ending) report(st *Stats) {
	switch {
	case e.cutBy != "":
		st.TruncatedBy = strings.TrimRight(e.cutBy, "; ")
	case e.cut:
		st.TruncatedBy = "the last line stops inside an entity"
	case e.opened && !e.closed:
		st.TruncatedBy = "the dump ends before its closing ']'"
	default:
		return
	}
	st.Truncated = true
	st.LastEntity, st.LastEntityAt = e.lastID, e.lastOff
	if e.lastID != "" {
		st.TruncatedBy += fmt.Sprintf("; the last complete entity, %s, starts at byte %d of the uncompressed dump", e.lastID, e.lastOff)
	} else {
		st.TruncatedBy += "; no entity was complete before the cut"
	}
}

var bom = []byte("\xef\xbb\xbf")

// parseRef appends what one dump line holds to out. A line is normally one
// entity with a trailing comma, or the framing "[" or "]"; it may also start
// with "[" (a UTF-8 byte order mark before it on the first line), end with
// "]", or hold several comma-separated entities (a dump written as a
// one-line array): each entity gets its own result, with its own offset.
func parseRef(out []result, line []byte, l lineRef, f *Filter) []result {
	first := len(out)
	out, opens, closes := parseEntities(out, line, l, f)
	if len(out) > first {
		out[first].opens = opens
		out[len(out)-1].closes = closes
	}
	return out
}

// parseEntities is parseRef without the framing marks, which it returns:
// whether the line opens the array and whether it closes it.
func parseEntities(out []result, line []byte, l lineRef, f *Filter) (_ []result, opens, closes bool) {
	if l.tooLong {
		return append(out, result{off: l.off, err: fmt.Errorf("line longer than the limit"), cut: l.last}), false, false
	}
	base := l.off
	if l.off == 0 && bytes.HasPrefix(line, bom) {
		line, base = line[len(bom):], int64(len(bom))
	}
	s := &scanner{b: line}
	bad := func(at int, err error) []result {
		if l.last {
			err = fmt.Errorf("cut-off last line: %w", err)
		}
		return append(out, result{off: base + int64(at), err: err, cut: l.last})
	}
	if s.peek() == '[' {
		s.i++
		opens = true
	}
	n := 0
	for {
		switch s.peek() {
		case 0:
			if n == 0 {
				return append(out, result{off: l.off, framing: true}), opens, false
			}
			return out, opens, false
		case ']':
			s.i++
			if s.peek() == ',' {
				s.i++
			}
			if s.peek() != 0 {
				return bad(s.i, s.errf("trailing data after ']'")), opens, false
			}
			if n == 0 {
				return append(out, result{off: l.off, framing: true}), opens, true
			}
			return out, opens, true
		}
		start := s.i // the entity's offset in the line
		e, k, err := parseObject(s, f)
		if err != nil {
			// An object that is valid JSON but not a valid entity: skip it
			// and go on with the line's next one.
			s.i, s.depth = start, 0
			if s.skip() != nil || s.peek() != ',' {
				return bad(start, err), opens, false
			}
			s.i++
			out = append(out, result{off: base + int64(start), err: err})
			n++
			continue
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']', 0:
		default:
			return bad(start, s.errf("trailing data after the entity")), opens, false
		}
		if err := e.check(k); err != nil {
			out = append(out, result{off: base + int64(start), err: err})
		} else {
			out = append(out, result{off: base + int64(start), ent: e})
		}
		n++
	}
}

// ReadPropertiesTSV reads "PID<TAB>label" lines (the shared
// wikidata-properties file); lines without a valid PID are skipped. A file
// that is missing, or holds no line with a PID and a label, is an error
// naming it: a wrong path must not load a graph with no relation labels.
func ReadPropertiesTSV(path string) ([]kg.Relation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("relation labels file %s: %w", path, err)
	}
	defer f.Close()
	var out []kg.Relation
	labelled := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pid, label, ok := strings.Cut(sc.Text(), "\t")
		if !ok || len(pid) > 21 || !kg.ValidPID(pid) { // no plausible PID has over 20 digits
			continue
		}
		label = strings.TrimSpace(label)
		if label != "" {
			labelled++
		}
		out = append(out, kg.Relation{PID: pid, Label: label})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read relation labels file %s: %w", path, err)
	}
	if labelled == 0 {
		return nil, fmt.Errorf("relation labels file %s holds no PID<TAB>label line", path)
	}
	return out, nil
}
