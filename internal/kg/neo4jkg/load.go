package neo4jkg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/dmar-kg/dmar/cypher"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/progress"
)

var _ kg.Sink = (*Sink)(nil)

// Names returns the linking forms of an entity, stored as e.names and
// indexed by entity_names: the normalised forms of its label and aliases
// that may be linked, label first, each once (kg.NewDictionary's rules).
func Names(e kg.Entity) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, s := range append([]string{e.Label}, e.Aliases...) {
		f := kg.NormalizeForm(s)
		if f != "" && !seen[f] && kg.Linkable(f) {
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}

// SinkOptions configures the Bolt loader.
type SinkOptions struct {
	// Batch is the number of rows per transaction (default 2000).
	Batch int
	// Checkpoint, when set, is a file recording how many entities and triples
	// are committed. A run that stopped part way resumes after them when fed
	// the same input in the same order; Close removes the file. Writes are
	// MERGEs, so replaying rows is harmless either way.
	Checkpoint string
	// Progress receives progress lines (nil: silent); Total sizes its ETA.
	Progress io.Writer
	Total    int
}

type checkpoint struct {
	Entities int `json:"entities"`
	Triples  int `json:"triples"`
}

// Sink writes a graph into Neo4j over Bolt in batches
// (UNWIND $rows ... MERGE). It is not safe for concurrent use.
type Sink struct {
	st        *Store
	o         SinkOptions
	done      checkpoint // committed, as recorded in the checkpoint file
	seen      checkpoint // received in this run
	relLabels map[string]string
	meter     *progress.Meter
	// Skipped counts rows not sent because the checkpoint had them.
	Skipped int
}

// NewSink returns a Bolt loader writing into s, resuming from o.Checkpoint.
func (s *Store) NewSink(o SinkOptions) (*Sink, error) {
	if o.Batch <= 0 {
		o.Batch = 2000
	}
	k := &Sink{st: s, o: o, relLabels: map[string]string{}, meter: progress.New(o.Progress, "load neo4j", "rows", o.Total)}
	if o.Checkpoint != "" {
		b, err := os.ReadFile(o.Checkpoint)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("neo4jkg: checkpoint: %w", err)
		default:
			if err := json.Unmarshal(b, &k.done); err != nil {
				return nil, fmt.Errorf("neo4jkg: checkpoint %s: %w", o.Checkpoint, err)
			}
		}
	}
	return k, nil
}

// WriteRelations records property labels; relationships written afterwards
// carry them. Write relations first.
func (k *Sink) WriteRelations(ctx context.Context, rs []kg.Relation) error {
	for _, r := range rs {
		k.relLabels[r.PID] = r.Label
	}
	return ctx.Err()
}

// WriteEntities merges entities with their linking forms (Names).
func (k *Sink) WriteEntities(ctx context.Context, es []kg.Entity) error {
	rows := make([]map[string]any, 0, len(es))
	for _, e := range es {
		if k.resumed(&k.seen.Entities, k.done.Entities) {
			continue
		}
		rows = append(rows, map[string]any{
			"qid": e.QID, "label": e.Label, "description": e.Description,
			"aliases": nonNil(e.Aliases), "leadNames": nonNil(e.LeadNames), "names": Names(e),
			"derived": nonNil(kg.EntityDerivedForms(e)), "nameTokens": nonNil(kg.NameTokens(e)),
			"formsVersion": kg.FormsVersion,
		})
	}
	return k.flush(ctx, cypher.MergeEntities, rows, func(n int) { k.done.Entities += n })
}

// WriteTriples merges one relationship per triple, typed by its PID.
func (k *Sink) WriteTriples(ctx context.Context, ts []kg.Triple) error {
	rows := make([]map[string]any, 0, len(ts))
	for _, t := range ts {
		if k.resumed(&k.seen.Triples, k.done.Triples) {
			continue
		}
		if !kg.ValidQID(t.Head) || !kg.ValidQID(t.Tail) || !kg.ValidPID(t.PID) {
			// The PID becomes a relationship type: never let anything else through.
			return fmt.Errorf("neo4jkg: triple %v is not QID PID QID", t)
		}
		rows = append(rows, map[string]any{"head": t.Head, "tail": t.Tail, "pid": t.PID, "label": k.relLabels[t.PID]})
	}
	return k.flush(ctx, cypher.MergeTriples, rows, func(n int) { k.done.Triples += n })
}

// resumed counts one more row seen, and reports (counting it skipped)
// whether an earlier, interrupted load already wrote it: one of the first
// done rows of its kind.
func (k *Sink) resumed(seen *int, done int) bool {
	*seen++
	if *seen <= done {
		k.Skipped++
		return true
	}
	return false
}

func (k *Sink) flush(ctx context.Context, query string, rows []map[string]any, committed func(int)) error {
	for len(rows) > 0 {
		n := min(k.o.Batch, len(rows))
		if _, err := k.st.write(ctx, "load "+query, query, map[string]any{"rows": rows[:n]}, false); err != nil {
			return err
		}
		committed(n)
		if err := k.save(); err != nil {
			return err
		}
		k.meter.Add(n)
		rows = rows[n:]
	}
	return ctx.Err()
}

func (k *Sink) save() error {
	if k.o.Checkpoint == "" {
		return nil
	}
	b, _ := json.Marshal(k.done)
	tmp := k.o.Checkpoint + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("neo4jkg: checkpoint: %w", err)
	}
	if err := os.Rename(tmp, k.o.Checkpoint); err != nil {
		return fmt.Errorf("neo4jkg: checkpoint: %w", err)
	}
	return nil
}

// Close ends the load: name tokens are recounted (CountNameTokens) and the
// checkpoint is removed (a later run loads again, idempotently).
func (k *Sink) Close(ctx context.Context) error {
	k.meter.Done()
	if err := k.st.CountNameTokens(ctx); err != nil {
		return err
	}
	if k.o.Checkpoint != "" {
		if err := os.Remove(k.o.Checkpoint); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("neo4jkg: %w", err)
		}
	}
	return ctx.Err()
}

// LoadBundle loads the KG bundle in dir (the format of ../shared/data/codexm)
// through a Bolt Sink: relations, entities, then triples.
func (s *Store) LoadBundle(ctx context.Context, dir string, o SinkOptions) (kg.Counts, error) {
	b, err := bundle.Read(ctx, dir)
	if err != nil {
		return kg.Counts{}, err
	}
	c := kg.Counts{
		Read:     b.Stats.EntitiesRead + b.Stats.TriplesRead,
		Loaded:   b.Stats.EntitiesLoaded + b.Stats.TriplesLoaded,
		Filtered: b.Stats.EntitiesDuplicate + b.Stats.TriplesDuplicate, // repeats: the first stands
		Bad:      b.Stats.EntitiesBad + b.Stats.TriplesBad,
		Problems: b.Stats.Problems,
	}
	o.Total = len(b.Entities) + len(b.Triples)
	k, err := s.NewSink(o)
	if err != nil {
		return c, err
	}
	rels := make([]kg.Relation, 0, len(b.Relations))
	for _, r := range b.Relations {
		rels = append(rels, r)
	}
	if err := k.WriteRelations(ctx, rels); err != nil {
		return c, err
	}
	const chunk = 10000
	for i := 0; i < len(b.Entities); i += chunk {
		if err := k.WriteEntities(ctx, b.Entities[i:min(i+chunk, len(b.Entities))]); err != nil {
			return c, err
		}
	}
	for i := 0; i < len(b.Triples); i += chunk {
		if err := k.WriteTriples(ctx, b.Triples[i:min(i+chunk, len(b.Triples))]); err != nil {
			return c, err
		}
	}
	return c, k.Close(ctx)
}

// FillNames sets the linking forms (Names, and the context linker's derived
// forms and name tokens) of entities that lack them, as after `neo4j-admin
// database import` of CSV files that carry none, or whose forms were written
// under other rules (kg.FormsVersion: a graph loaded by an older dmar), from
// the labels, aliases and lead names the graph holds; then it recounts the
// name tokens if it set any. It returns how many entities it updated.
func (s *Store) FillNames(ctx context.Context, progressTo io.Writer) (int, error) {
	const batch = 5000
	m := progress.New(progressTo, "neo4j names", "entities", 0)
	defer m.Done()
	total, after := 0, ""
	for {
		res, err := s.read(ctx, "entities without names", cypher.EntitiesNoNames, map[string]any{"after": after, "limit": batch, "version": kg.FormsVersion})
		if err != nil {
			return total, err
		}
		if len(res.Records) == 0 {
			if total == 0 {
				return 0, nil
			}
			return total, s.CountNameTokens(ctx)
		}
		rows := make([]map[string]any, len(res.Records))
		for i, r := range res.Records {
			e := kg.Entity{QID: str(r.Values[0]), Label: str(r.Values[1]), Aliases: strs(r.Values[2]), LeadNames: strs(r.Values[3])}
			rows[i] = map[string]any{"qid": e.QID, "names": Names(e),
				"derived": nonNil(kg.EntityDerivedForms(e)), "nameTokens": nonNil(kg.NameTokens(e)), "formsVersion": kg.FormsVersion}
			after = e.QID
		}
		if _, err := s.write(ctx, "set names", cypher.SetNames, map[string]any{"rows": rows}, false); err != nil {
			return total, err
		}
		total += len(rows)
		m.Add(len(rows))
	}
}

// CountNameTokens recounts (:NameToken {token, freq}), the number of
// entities whose names hold each token (kg.NameTokens), from the whole graph:
// a load changes the counts of tokens it never wrote. It writes in batches
// (seconds on codexm, minutes at millions of tokens), so it is not atomic:
// while it runs, some tokens have their new counts and tokens no entity
// holds any more are deleted last; a load-time step can accept that.
func (s *Store) CountNameTokens(ctx context.Context) error {
	p := map[string]any{"stamp": time.Now().UnixNano()}
	if err := s.autocommit(ctx, "count name tokens", cypher.CountNameTokens, p); err != nil {
		return err
	}
	return s.autocommit(ctx, "drop stale name tokens", cypher.DropStaleTokens, p)
}

// DocumentLink is a corpus document and the entities it mentions.
type DocumentLink struct {
	ID       string
	Title    string
	Entities []string // QIDs; unknown ones are dropped
}

// PutDocuments merges (:Document {id, title})-[:MENTIONS]->(:Entity) in
// batches. Rerunning adds no duplicates.
func (s *Store) PutDocuments(ctx context.Context, docs []DocumentLink) error {
	const batch = 1000
	for i := 0; i < len(docs); i += batch {
		part := docs[i:min(i+batch, len(docs))]
		rows := make([]map[string]any, len(part))
		for j, d := range part {
			if d.ID == "" {
				return fmt.Errorf("neo4jkg: document %d has no id", i+j)
			}
			rows[j] = map[string]any{"id": d.ID, "title": d.Title, "entities": nonNil(d.Entities)}
		}
		if _, err := s.write(ctx, "put documents", cypher.PutDocuments, map[string]any{"docs": rows}, false); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Counts are the sizes of the graph in Neo4j.
type Counts struct {
	Entities, Statements, Documents int
}

// Counts counts entities, statements between entities and documents.
func (s *Store) Counts(ctx context.Context) (Counts, error) {
	res, err := s.read(ctx, "counts", cypher.Counts, nil)
	if err != nil {
		return Counts{}, err
	}
	if len(res.Records) != 1 {
		return Counts{}, fmt.Errorf("neo4jkg: counts: %d rows", len(res.Records))
	}
	v := res.Records[0].Values
	return Counts{Entities: integer(v[0]), Statements: integer(v[1]), Documents: integer(v[2])}, nil
}

// DeleteGraph removes every entity, document and retrieval (the schema and
// the migration records stay), in transactions of 10,000 nodes. For tests and
// full reloads.
func (s *Store) DeleteGraph(ctx context.Context) error {
	return s.autocommit(ctx, "delete graph", cypher.DeleteGraph, nil)
}

// autocommit runs a named statement that writes in an implicit (auto-commit)
// transaction, as CALL ... IN TRANSACTIONS needs: it commits its own
// batches, so it is not retried as a managed transaction would be.
func (s *Store) autocommit(ctx context.Context, op, name string, params map[string]any) error {
	sess := s.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: s.db, AccessMode: neo4j.AccessModeWrite})
	defer sess.Close(context.Background())
	s.statements.Add(1)
	res, err := sess.Run(ctx, s.q.Get(name), params)
	if err == nil {
		_, err = res.Consume(ctx)
	}
	return s.wrap(ctx, op, err)
}
