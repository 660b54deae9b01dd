// Package bundlesink is a kg.Sink writing dmar's KG bundle directory
// (the format of ../shared/data/codexm that loaders/bundle reads and the
// embedded graph serves): triples.tsv, entities.jsonl and relations.json. It
// holds the graph in memory and writes the three files at Close, each
// through a temporary file, renamed into place once all three are written,
// so a rerun overwrites and a failed run (Abort, or a Close that fails or
// whose context is done) leaves the previous bundle intact.
//
// Output is deterministic: entities sorted by QID with their degree (item
// statements in + out), triples in first-write order, relations.json with the
// properties that some triple uses, keys sorted.
package bundlesink

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/dmar-kg/dmar/internal/kg"
)

var _ kg.Sink = (*Sink)(nil)

// Sink accumulates a bundle. Not safe for concurrent use.
type Sink struct {
	dir       string
	entities  map[string]kg.Entity
	triples   []kg.Triple
	seen      map[kg.Triple]struct{}
	relations map[string]kg.Relation
	closed    bool
}

// New returns a sink that writes into dir (created at Close if needed).
func New(dir string) *Sink {
	return &Sink{dir: dir, entities: map[string]kg.Entity{}, seen: map[kg.Triple]struct{}{}, relations: map[string]kg.Relation{}}
}

// WriteEntities adds entities; the first write of a QID stands.
func (s *Sink) WriteEntities(ctx context.Context, es []kg.Entity) error {
	for _, e := range es {
		if !kg.ValidQID(e.QID) {
			return fmt.Errorf("bundlesink: entity %q is not a QID", e.QID)
		}
		if _, ok := s.entities[e.QID]; !ok {
			e.Degree = 0
			s.entities[e.QID] = e
		}
	}
	return ctx.Err()
}

// WriteTriples adds triples, each once.
func (s *Sink) WriteTriples(ctx context.Context, ts []kg.Triple) error {
	for _, t := range ts {
		if !kg.ValidQID(t.Head) || !kg.ValidPID(t.PID) || !kg.ValidQID(t.Tail) {
			return fmt.Errorf("bundlesink: triple %v is not QID PID QID", t)
		}
		if _, dup := s.seen[t]; dup {
			continue
		}
		s.seen[t] = struct{}{}
		s.triples = append(s.triples, t)
	}
	return ctx.Err()
}

// WriteRelations records property labels; a later non-empty label or
// description replaces an earlier one.
func (s *Sink) WriteRelations(ctx context.Context, rs []kg.Relation) error {
	for _, r := range rs {
		if !kg.ValidPID(r.PID) {
			return fmt.Errorf("bundlesink: relation %q is not a PID", r.PID)
		}
		old := s.relations[r.PID]
		if r.Label == "" {
			r.Label = old.Label
		}
		if r.Description == "" {
			r.Description = old.Description
		}
		s.relations[r.PID] = r
	}
	return ctx.Err()
}

type entityLine struct {
	QID         string   `json:"qid"`
	Label       string   `json:"label"`
	Aliases     []string `json:"aliases"`
	Description string   `json:"description,omitempty"`
	Degree      int      `json:"degree"`
}

type relationValue struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
	Triples     int    `json:"triples"`
}

// Abort ends a failed load: nothing is written and the bundle an earlier
// run left in dir stays as it was. The sink is not used after.
func (s *Sink) Abort() error {
	s.closed = true
	s.entities, s.triples, s.seen, s.relations = nil, nil, nil, nil
	return nil
}

// Close writes the bundle: the three files go to temporary names first and
// are renamed into place only once all three are complete (and ctx is not
// done), so a failure leaves the previous bundle whole.
func (s *Sink) Close(ctx context.Context) error {
	if s.closed {
		return nil
	}
	s.closed = true
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("bundlesink: %w", err)
	}
	degree := map[string]int{}
	perPID := map[string]int{}
	for _, t := range s.triples {
		degree[t.Head]++
		degree[t.Tail]++
		perPID[t.PID]++
	}
	var parts []*part
	defer func() {
		for _, p := range parts {
			p.discard()
		}
	}()
	for _, f := range []struct {
		name string
		fill func(*bufio.Writer) error
	}{
		{"triples.tsv", s.triplesTSV},
		{"entities.jsonl", func(w *bufio.Writer) error { return s.entitiesJSONL(w, degree) }},
		{"relations.json", func(w *bufio.Writer) error { return s.relationsJSON(w, perPID) }},
	} {
		p, err := writePart(s.dir, f.name, f.fill)
		if err != nil {
			return err
		}
		parts = append(parts, p)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, p := range parts {
		if err := os.Rename(p.tmp, filepath.Join(s.dir, p.name)); err != nil {
			return fmt.Errorf("bundlesink: %w", err)
		}
	}
	return nil
}

// triplesTSV writes triples.tsv: one "head<TAB>pid<TAB>tail" line per
// triple, in first-write order.
func (s *Sink) triplesTSV(w *bufio.Writer) error {
	for _, t := range s.triples {
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\n", t.Head, t.PID, t.Tail); err != nil {
			return err
		}
	}
	return nil
}

// entitiesJSONL writes entities.jsonl: one line per entity, sorted by QID,
// with its degree.
func (s *Sink) entitiesJSONL(w *bufio.Writer, degree map[string]int) error {
	qids := make([]string, 0, len(s.entities))
	for q := range s.entities {
		qids = append(qids, q)
	}
	sort.Strings(qids)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, q := range qids {
		e := s.entities[q]
		aliases := e.Aliases
		if aliases == nil {
			aliases = []string{}
		}
		if err := enc.Encode(entityLine{QID: q, Label: e.Label, Aliases: aliases, Description: e.Description, Degree: degree[q]}); err != nil {
			return err
		}
	}
	return nil
}

// relationsJSON writes relations.json: the properties some triple uses
// (perPID counts them), with their labels.
func (s *Sink) relationsJSON(w *bufio.Writer, perPID map[string]int) error {
	rels := map[string]relationValue{}
	for pid, n := range perPID {
		r := s.relations[pid]
		rels[pid] = relationValue{Label: r.Label, Description: r.Description, Triples: n}
	}
	b, err := json.MarshalIndent(rels, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// part is a complete file under a temporary name in the bundle directory.
type part struct{ tmp, name string }

// discard removes the temporary file (a no-op once renamed).
func (p *part) discard() { os.Remove(p.tmp) }

// writePart writes dir/name's content to a temporary file beside it.
func writePart(dir, name string, fill func(*bufio.Writer) error) (*part, error) {
	f, err := os.CreateTemp(dir, "."+name+"-*.part")
	if err != nil {
		return nil, fmt.Errorf("bundlesink: %w", err)
	}
	p := &part{tmp: f.Name(), name: name}
	fail := func(err error) (*part, error) {
		f.Close()
		p.discard()
		return nil, fmt.Errorf("bundlesink: write %s: %w", name, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if err := fill(w); err != nil {
		return fail(err)
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		p.discard()
		return nil, fmt.Errorf("bundlesink: write %s: %w", name, err)
	}
	return p, nil
}
