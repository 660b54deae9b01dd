package bundle

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Stream copies the bundle in dir into sink without holding it: relations,
// then entities and triples in file order, in batches of batch records
// (0: 10,000). Records are checked, counted and de-duplicated as Read does
// (the same Stats), but entities are not sorted, are not given degrees (a
// sink counts them as it writes) and get no lead names. Its memory is a
// set of the QIDs and one of the triples seen, a few dozen bytes a triple,
// where Read holds the whole graph: at 20 M triples, Read needs about 8 GB.
// A batch's slice is reused once its write returns (every sink copies what it
// keeps). Stream does not close sink (kg.Finish does).
func Stream(ctx context.Context, dir string, sink kg.Sink, batch int) (Stats, error) {
	if batch <= 0 {
		batch = 10000
	}
	rk := &KG{Relations: map[string]kg.Relation{}}
	if err := readRelations(filepath.Join(dir, "relations.json"), rk); err != nil {
		return rk.Stats, err
	}
	st := rk.Stats
	rels := make([]kg.Relation, 0, len(rk.Relations))
	for _, r := range rk.Relations {
		rels = append(rels, r)
	}
	if err := sink.WriteRelations(ctx, rels); err != nil {
		return st, fmt.Errorf("write relations: %w", err)
	}

	entities := filepath.Join(dir, "entities.jsonl")
	first := map[string]int{}
	err := streamFile(ctx, entities, batch, func(n int, line []byte) (kg.Entity, bool) {
		return parseEntity(entities, n, line, first, &st)
	}, st.longLine(entities, &st.EntitiesRead, &st.EntitiesBad), sink.WriteEntities, "entities")
	if err != nil {
		return st, err
	}
	first = nil

	triples := filepath.Join(dir, "triples.tsv")
	seen := newTripleSet()
	err = streamFile(ctx, triples, batch, func(n int, line []byte) (kg.Triple, bool) {
		return parseTriple(triples, n, line, seen.firstLine, &st)
	}, st.longLine(triples, &st.TriplesRead, &st.TriplesBad), sink.WriteTriples, "triples")
	return st, err
}

// streamFile hands the records parse finds in the lines of path to write,
// batch at a time; the first write error stops the reads and is returned
// (after a read error), naming what was written.
func streamFile[T any](ctx context.Context, path string, batch int, parse func(n int, line []byte) (T, bool), tooLong func(n int), write func(context.Context, []T) error, what string) error {
	var werr error
	buf := make([]T, 0, batch)
	err := eachLine(ctx, path, func(n int, line []byte) {
		if werr != nil {
			return
		}
		if r, ok := parse(n, line); ok {
			if buf = append(buf, r); len(buf) == batch {
				werr = flush(ctx, &buf, write, what, werr)
			}
		}
	}, tooLong)
	werr = flush(ctx, &buf, write, what, werr)
	if err == nil {
		err = werr
	}
	return err
}

// flush hands the batch in buf to write unless an earlier write failed, and
// empties it; it returns the first failure (werr, else this write's),
// naming what was written.
func flush[T any](ctx context.Context, buf *[]T, write func(context.Context, []T) error, what string, werr error) error {
	if werr == nil && len(*buf) > 0 {
		if err := write(ctx, *buf); err != nil {
			werr = fmt.Errorf("write %s: %w", what, err)
		}
	}
	*buf = (*buf)[:0]
	return werr
}

// tripleSet remembers the first line of each triple by the numbers of its
// ids (24 bytes a key, where a kg.Triple key is 48 plus its strings); ids
// too long for a uint64 go to a map of strings.
type tripleSet struct {
	nums map[[3]uint64]int
	long map[kg.Triple]int
}

func newTripleSet() *tripleSet {
	return &tripleSet{nums: map[[3]uint64]int{}, long: map[kg.Triple]int{}}
}

// firstLine returns the line t was first seen on and true, or records line
// n for t and returns false.
func (s *tripleSet) firstLine(t kg.Triple, n int) (int, bool) {
	h, err1 := strconv.ParseUint(t.Head[1:], 10, 64)
	p, err2 := strconv.ParseUint(t.PID[1:], 10, 64)
	tl, err3 := strconv.ParseUint(t.Tail[1:], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		at, dup := s.long[t]
		if !dup {
			s.long[t] = n
		}
		return at, dup
	}
	k := [3]uint64{h, p, tl}
	at, dup := s.nums[k]
	if !dup {
		s.nums[k] = n
	}
	return at, dup
}
