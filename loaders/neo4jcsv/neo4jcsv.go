// Package neo4jcsv is a kg.Sink writing CSV files for
// `neo4j-admin database import full`, the only fast way to put a full
// Wikidata dump into Neo4j. It writes, in Dir:
//
//	nodes.csv          qid:ID(Entity),:LABEL,label,description,aliases:string[],degree:int
//	relationships.csv  :START_ID(Entity),:END_ID(Entity),:TYPE,pid,label
//
// each with its header as the first line. The :LABEL is Entity; aliases are
// joined by ArrayDelimiter (U+001F by default: it never occurs in Wikidata
// text, unlike ';' or '|'; pass --array-delimiter=U+001F). Every
// relationship is typed by its property id (:P31, :P106): types never depend
// on a label that may be missing or renamed, per-type scans stay fast, and
// the readable name is the relationship's label property (Browser can
// caption by it). Newlines inside text become spaces so that the import needs
// no --multiline-fields; quotes and commas are quoted the CSV way ("" inside
// a quoted field), which the importer reads by default.
//
// degree is the number of relationships touching the node, known only at
// the end: nodes are spooled to a temporary file and written with their
// degree by Close. Triples naming an item never written as an entity get a
// node with the QID as label (as bundle.Read does), so the import finds
// every end. Output is deterministic (entities in write order, then those
// stub nodes by QID number) and a rerun overwrites the files; they appear
// only when Close succeeds. A load that fails calls Abort instead: the
// temporary files go and whatever an earlier run wrote stays as it was.
package neo4jcsv

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/loaders/internal/qidset"
)

var _ kg.Sink = (*Sink)(nil)

// Headers of the two files.
var (
	NodeHeader = []string{"qid:ID(Entity)", ":LABEL", "label", "description", "aliases:string[]", "degree:int"}
	RelHeader  = []string{":START_ID(Entity)", ":END_ID(Entity)", ":TYPE", "pid", "label"}
)

// File names inside Dir.
const (
	NodesFile         = "nodes.csv"
	RelationshipsFile = "relationships.csv"
)

// DefaultArrayDelimiter separates aliases inside the aliases field.
const DefaultArrayDelimiter = '\x1f'

// RelType is the relationship type of a property: its PID.
func RelType(pid string) string { return pid }

// Options configures a Sink.
type Options struct {
	ArrayDelimiter rune // 0 means DefaultArrayDelimiter
	// UniqueTriples says the source never repeats a triple (the Wikidata
	// loader guarantees it), so the sink keeps no set of written triples
	// (about 24 bytes per triple on a full dump).
	UniqueTriples bool
}

// Sink writes the CSV files. It is not safe for concurrent use.
type Sink struct {
	dir, delim   string
	unique       bool
	nodesTmp     *os.File
	relsTmp      *os.File
	nodes, rels  *csv.Writer
	nodesBuf     *bufio.Writer
	relsBuf      *bufio.Writer
	seen         qidset.Set
	degree       qidset.Counter
	triples      map[[3]uint32]struct{}
	relLabels    map[string]string
	Nodes, Edges int // written so far (stubs included after Close)
	closed       bool
}

// New creates dir if needed and starts writing there.
func New(dir string, o Options) (*Sink, error) {
	if o.ArrayDelimiter == 0 {
		o.ArrayDelimiter = DefaultArrayDelimiter
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("neo4jcsv: %w", err)
	}
	s := &Sink{dir: dir, delim: string(o.ArrayDelimiter), unique: o.UniqueTriples, relLabels: map[string]string{}}
	if !o.UniqueTriples {
		s.triples = map[[3]uint32]struct{}{}
	}
	var err error
	if s.nodesTmp, err = os.CreateTemp(dir, ".nodes-*.part"); err != nil {
		return nil, fmt.Errorf("neo4jcsv: %w", err)
	}
	if s.relsTmp, err = os.CreateTemp(dir, ".relationships-*.part"); err != nil {
		s.nodesTmp.Close()
		os.Remove(s.nodesTmp.Name())
		return nil, fmt.Errorf("neo4jcsv: %w", err)
	}
	s.nodesBuf = bufio.NewWriterSize(s.nodesTmp, 1<<20)
	s.relsBuf = bufio.NewWriterSize(s.relsTmp, 1<<20)
	s.nodes = csv.NewWriter(s.nodesBuf)
	s.rels = csv.NewWriter(s.relsBuf)
	if err := s.rels.Write(RelHeader); err != nil {
		return nil, errors.Join(err, s.Abort())
	}
	return s, nil
}

// Abort ends a failed load: it removes the temporary files and leaves Dir's
// nodes.csv and relationships.csv as they were. The sink is not used after.
func (s *Sink) Abort() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, f := range []*os.File{s.nodesTmp, s.relsTmp} {
		f.Close()
		if err := os.Remove(f.Name()); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// oneLine replaces line breaks with spaces (see the package comment).
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(s)), " ")
}

// WriteEntities spools entities; the first write of a QID stands.
func (s *Sink) WriteEntities(ctx context.Context, es []kg.Entity) error {
	for _, e := range es {
		n, ok := qidset.Num(e.QID)
		if !ok {
			return fmt.Errorf("neo4jcsv: entity %q is not a QID", e.QID)
		}
		if !s.seen.Add(n) {
			continue
		}
		label := oneLine(e.Label)
		if label == "" {
			label = e.QID
		}
		aliases := make([]string, 0, len(e.Aliases))
		for _, a := range e.Aliases {
			if a = strings.ReplaceAll(oneLine(a), s.delim, " "); a != "" {
				aliases = append(aliases, a)
			}
		}
		if err := s.nodes.Write([]string{e.QID, "Entity", label, oneLine(e.Description), strings.Join(aliases, s.delim)}); err != nil {
			return fmt.Errorf("neo4jcsv: write node: %w", err)
		}
		s.Nodes++
	}
	return ctx.Err()
}

// WriteTriples writes relationships, typed by PID, each triple once.
func (s *Sink) WriteTriples(ctx context.Context, ts []kg.Triple) error {
	for _, t := range ts {
		h, ok1 := qidset.Num(t.Head)
		tl, ok2 := qidset.Num(t.Tail)
		if !ok1 || !ok2 || !kg.ValidPID(t.PID) {
			return fmt.Errorf("neo4jcsv: triple %v is not QID PID QID", t)
		}
		if s.triples != nil {
			p, _ := strconv.ParseUint(t.PID[1:], 10, 32)
			k := [3]uint32{h, uint32(p), tl}
			if _, dup := s.triples[k]; dup {
				continue
			}
			s.triples[k] = struct{}{}
		}
		if err := s.rels.Write([]string{t.Head, t.Tail, RelType(t.PID), t.PID, s.relLabels[t.PID]}); err != nil {
			return fmt.Errorf("neo4jcsv: write relationship: %w", err)
		}
		s.degree.Inc(h)
		s.degree.Inc(tl)
		s.Edges++
	}
	return ctx.Err()
}

// WriteRelations records property labels for the relationships written
// after it (the last label written for a PID stands).
func (s *Sink) WriteRelations(ctx context.Context, rs []kg.Relation) error {
	for _, r := range rs {
		if !kg.ValidPID(r.PID) {
			return fmt.Errorf("neo4jcsv: relation %q is not a PID", r.PID)
		}
		if r.Label != "" {
			s.relLabels[r.PID] = oneLine(r.Label)
		}
	}
	return ctx.Err()
}

// Close writes nodes.csv with degrees and the stub nodes, then renames both
// files into place. With ctx done it renames nothing and returns ctx's error.
func (s *Sink) Close(ctx context.Context) error {
	if s.closed {
		return nil
	}
	s.closed = true
	defer os.Remove(s.nodesTmp.Name())
	defer os.Remove(s.relsTmp.Name())
	defer s.nodesTmp.Close()
	defer s.relsTmp.Close()
	for _, w := range []*csv.Writer{s.nodes, s.rels} {
		w.Flush()
		if err := w.Error(); err != nil {
			return fmt.Errorf("neo4jcsv: %w", err)
		}
	}
	for _, b := range []*bufio.Writer{s.nodesBuf, s.relsBuf} {
		if err := b.Flush(); err != nil {
			return fmt.Errorf("neo4jcsv: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	out, err := os.CreateTemp(s.dir, ".nodes-final-*.part")
	if err != nil {
		return fmt.Errorf("neo4jcsv: %w", err)
	}
	defer os.Remove(out.Name())
	defer out.Close()
	for _, f := range []*os.File{out, s.relsTmp} {
		if err := f.Chmod(0o644); err != nil {
			return fmt.Errorf("neo4jcsv: %w", err)
		}
	}
	if err := s.finishNodes(out); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("neo4jcsv: %w", err)
	}
	if err := s.relsTmp.Close(); err != nil {
		return fmt.Errorf("neo4jcsv: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Rename(out.Name(), filepath.Join(s.dir, NodesFile)); err != nil {
		return fmt.Errorf("neo4jcsv: %w", err)
	}
	if err := os.Rename(s.relsTmp.Name(), filepath.Join(s.dir, RelationshipsFile)); err != nil {
		return fmt.Errorf("neo4jcsv: %w", err)
	}
	return nil
}

// finishNodes copies the spooled nodes adding degree, then writes stubs.
func (s *Sink) finishNodes(out *os.File) error {
	if _, err := s.nodesTmp.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("neo4jcsv: %w", err)
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	w := csv.NewWriter(bw)
	if err := w.Write(NodeHeader); err != nil {
		return err
	}
	r := csv.NewReader(bufio.NewReaderSize(s.nodesTmp, 1<<20))
	r.FieldsPerRecord = 5
	r.ReuseRecord = true
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("neo4jcsv: reread spooled nodes: %w", err)
		}
		n, _ := qidset.Num(rec[0])
		if err := w.Write(append(rec, strconv.FormatUint(uint64(s.degree.Get(n)), 10))); err != nil {
			return err
		}
	}
	var werr error
	s.degree.Each(func(n, d uint32) {
		if werr != nil || s.seen.Has(n) {
			return
		}
		q := "Q" + strconv.FormatUint(uint64(n), 10)
		werr = w.Write([]string{q, "Entity", q, "", "", strconv.FormatUint(uint64(d), 10)})
		s.Nodes++
	})
	if werr != nil {
		return fmt.Errorf("neo4jcsv: %w", werr)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("neo4jcsv: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("neo4jcsv: %w", err)
	}
	return nil
}
