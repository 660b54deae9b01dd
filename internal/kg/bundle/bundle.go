// Package bundle reads dmar's KG bundle format, the format of
// ../shared/data/codexm: a directory with triples.tsv (head, property, tail),
// entities.jsonl ({qid, label, aliases[], ...}) and relations.json
// ({PID: {label, description}}), and, when the folder holds it, the
// corpus.jsonl whose documents are the entities' own pages (id = QID): their
// leads give the entities' other names (kg.LeadNames; Read only, Stream
// leaves them out). Bad records are counted, reported and skipped; good ones
// are never lost: a repeated record keeps its first occurrence.
package bundle

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/dmar-kg/dmar/internal/kg"
)

// KG is a parsed bundle.
type KG struct {
	Entities  []kg.Entity // sorted by QID; Degree filled from Triples
	Relations map[string]kg.Relation
	Triples   []kg.Triple // de-duplicated, in file order
	Stats     Stats
}

// Stats counts what a read saw: Read = Loaded + Bad + Duplicate, for
// entities and for triples. A repeated record (the same QID on two lines of
// entities.jsonl, the same triple twice, the same PID twice in
// relations.json) keeps its first occurrence; repeats are counted and
// reported in Problems with both line numbers.
type Stats struct {
	EntitiesRead, EntitiesLoaded, EntitiesBad int
	EntitiesDuplicate                         int
	TriplesRead, TriplesLoaded, TriplesBad    int
	TriplesDuplicate                          int
	RelationsLoaded, RelationsBad             int
	RelationsDuplicate                        int
	// LeadNamed counts the entities whose document gave them lead names;
	// DocumentsBad the corpus lines skipped while reading them.
	LeadNamed, DocumentsBad int
	// Problems holds the first few reasons records were skipped.
	Problems []string
}

const maxProblems = 10

func (s *Stats) problem(format string, args ...any) {
	if len(s.Problems) < maxProblems {
		s.Problems = append(s.Problems, fmt.Sprintf(format, args...))
	}
}

// longLine counts a line of path over maxLine bytes as read (when read is
// set) and bad, and reports it.
func (s *Stats) longLine(path string, read, bad *int) func(n int) {
	return func(n int) {
		if read != nil {
			*read++
		}
		*bad++
		s.problem("%s:%d: a line over %d bytes", path, n, maxLine)
	}
}

type entityLine struct {
	QID         string   `json:"qid"`
	Label       string   `json:"label"`
	Aliases     []string `json:"aliases"`
	Description string   `json:"description"`
}

// Read parses the bundle in dir. Triples naming an entity that entities.jsonl
// lacks still load: the entity is added with its QID as label.
func Read(ctx context.Context, dir string) (*KG, error) {
	out := &KG{Relations: map[string]kg.Relation{}}
	if err := readRelations(filepath.Join(dir, "relations.json"), out); err != nil {
		return nil, err
	}
	ents := map[string]kg.Entity{}
	if err := readEntities(ctx, filepath.Join(dir, "entities.jsonl"), ents, &out.Stats); err != nil {
		return nil, err
	}
	if err := readTriples(ctx, filepath.Join(dir, "triples.tsv"), out, &out.Stats); err != nil {
		return nil, err
	}
	degree := map[string]int{}
	for _, t := range out.Triples {
		degree[t.Head]++
		degree[t.Tail]++
		for _, q := range []string{t.Head, t.Tail} {
			if _, ok := ents[q]; !ok {
				ents[q] = kg.Entity{QID: q, Label: q}
			}
		}
	}
	if err := readLeadNames(ctx, filepath.Join(dir, CorpusFile), ents, &out.Stats); err != nil {
		return nil, err
	}
	out.Entities = make([]kg.Entity, 0, len(ents))
	for q, e := range ents {
		e.Degree = degree[q]
		out.Entities = append(out.Entities, e)
	}
	sort.Slice(out.Entities, func(i, j int) bool { return out.Entities[i].QID < out.Entities[j].QID })
	return out, nil
}

// readRelations reads relations.json, an object keyed by PID, token by
// token so that a repeated key is seen (encoding/json would keep the last).
func readRelations(path string, out *KG) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read relations: %w", err)
	}
	st := &out.Stats
	lineAt := func(off int64) int { return bytes.Count(b[:off], []byte("\n")) + 1 }
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return fmt.Errorf("parse %s: want a JSON object of properties", path)
	}
	first := map[string]int{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("parse %s: %w", path, err)
		}
		pid, _ := t.(string)
		line := lineAt(dec.InputOffset())
		var r struct {
			Label       string `json:"label"`
			Description string `json:"description"`
		}
		if err := dec.Decode(&r); err != nil {
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) {
				return fmt.Errorf("parse %s: %w", path, err)
			}
			st.RelationsBad++
			st.problem("%s:%d: %s: %v", path, line, pid, err)
			continue
		}
		if why := badID(pid, kg.ValidPID, "property id"); why != "" {
			st.RelationsBad++
			st.problem("%s:%d: %s", path, line, why)
			continue
		}
		if at, dup := first[pid]; dup {
			st.RelationsDuplicate++
			st.problem("%s:%d: %s repeats line %d; the first stands", path, line, pid, at)
			continue
		}
		first[pid] = line
		out.Relations[pid] = kg.Relation{PID: pid, Label: r.Label, Description: r.Description}
		st.RelationsLoaded++
	}
	if _, err := dec.Token(); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("parse %s: data after the object", path)
	}
	return nil
}

func readEntities(ctx context.Context, path string, ents map[string]kg.Entity, st *Stats) error {
	first := map[string]int{} // QID -> the line that loaded it
	return eachLine(ctx, path, func(n int, line []byte) {
		if e, ok := parseEntity(path, n, line, first, st); ok {
			ents[e.QID] = e
		}
	}, st.longLine(path, &st.EntitiesRead, &st.EntitiesBad))
}

// parseEntity reads line n of entities.jsonl; a bad line or a repeated QID
// (first: QID -> the line that loaded it) is counted, reported and false.
func parseEntity(path string, n int, line []byte, first map[string]int, st *Stats) (kg.Entity, bool) {
	st.EntitiesRead++
	var l entityLine
	if err := json.Unmarshal(line, &l); err != nil {
		st.EntitiesBad++
		st.problem("%s:%d: %v", path, n, err)
		return kg.Entity{}, false
	}
	if why := badID(l.QID, kg.ValidQID, "QID"); why != "" {
		st.EntitiesBad++
		st.problem("%s:%d: %s", path, n, why)
		return kg.Entity{}, false
	}
	if at, dup := first[l.QID]; dup {
		st.EntitiesDuplicate++
		st.problem("%s:%d: %s repeats line %d; the first stands", path, n, l.QID, at)
		return kg.Entity{}, false
	}
	first[l.QID] = n
	label := strings.TrimSpace(l.Label)
	if label == "" {
		label = l.QID
	}
	st.EntitiesLoaded++
	return kg.Entity{QID: l.QID, Label: label, Aliases: kg.CleanAliases(label, l.Aliases), Description: l.Description}, true
}

// CorpusFile is the corpus beside a bundle whose documents give the
// entities their lead names.
const CorpusFile = "corpus.jsonl"

// readLeadNames sets the lead names of the entities whose document path
// holds; a bundle without a corpus has none. A bad line is counted and
// skipped: it costs an entity its lead names, nothing else.
func readLeadNames(ctx context.Context, path string, ents map[string]kg.Entity, st *Stats) error {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return eachLine(ctx, path, func(n int, line []byte) {
		var d struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(line, &d); err != nil {
			st.DocumentsBad++
			st.problem("%s:%d: %v", path, n, err)
			return
		}
		e, ok := ents[d.ID]
		if !ok {
			return
		}
		known := map[string]bool{kg.NormalizeForm(e.Label): true}
		for _, a := range e.Aliases {
			known[kg.NormalizeForm(a)] = true
		}
		e.LeadNames = nil
		for _, name := range kg.LeadNames(d.Text) {
			if f := kg.NormalizeForm(name); !known[f] {
				known[f] = true
				e.LeadNames = append(e.LeadNames, name)
			}
		}
		if len(e.LeadNames) > 0 {
			ents[d.ID] = e
			st.LeadNamed++
		}
	}, st.longLine(path, nil, &st.DocumentsBad))
}

func readTriples(ctx context.Context, path string, out *KG, st *Stats) error {
	first := map[kg.Triple]int{} // triple -> the line that loaded it
	seen := func(t kg.Triple, n int) (int, bool) {
		at, dup := first[t]
		if !dup {
			first[t] = n
		}
		return at, dup
	}
	return eachLine(ctx, path, func(n int, line []byte) {
		if t, ok := parseTriple(path, n, line, seen, st); ok {
			out.Triples = append(out.Triples, t)
		}
	}, st.longLine(path, &st.TriplesRead, &st.TriplesBad))
}

// parseTriple reads line n of triples.tsv; a bad line, or a triple that seen
// reports as loaded before (with that line), is counted, reported and false.
// seen records the triple's first line when it is new.
func parseTriple(path string, n int, line []byte, seen func(kg.Triple, int) (int, bool), st *Stats) (kg.Triple, bool) {
	st.TriplesRead++
	f := strings.Split(strings.TrimRight(string(line), "\r"), "\t")
	if len(f) != 3 {
		st.TriplesBad++
		st.problem("%s:%d: want 3 tab-separated fields, got %d", path, n, len(f))
		return kg.Triple{}, false
	}
	t := kg.Triple{Head: f[0], PID: f[1], Tail: f[2]}
	why := cmp.Or(badID(t.Head, kg.ValidQID, "QID"), badID(t.PID, kg.ValidPID, "property id"), badID(t.Tail, kg.ValidQID, "QID"))
	if why != "" {
		st.TriplesBad++
		st.problem("%s:%d: want QID PID QID: %s", path, n, why)
		return kg.Triple{}, false
	}
	if at, dup := seen(t, n); dup {
		st.TriplesDuplicate++
		st.problem("%s:%d: %s %s %s repeats line %d", path, n, t.Head, t.PID, t.Tail, at)
		return kg.Triple{}, false
	}
	st.TriplesLoaded++
	return t, true
}

// maxIDDigits bounds an id's number: 20 digits hold every uint64, and no
// Wikidata id comes near; a longer one is a damaged or hostile line.
const maxIDDigits = 20

// badID says why id is not a plausible id of its kind ("" when it is).
func badID(id string, valid func(string) bool, kind string) string {
	switch {
	case len(id) > maxIDDigits+1:
		return fmt.Sprintf("%q (%d characters) is not a plausible %s: at most %d digits", clip(id), len(id), kind, maxIDDigits)
	case !valid(id):
		return fmt.Sprintf("%q is not a %s", clip(id), kind)
	}
	return ""
}

// clip cuts a value repeated in a problem to 40 bytes.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	n := 40
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// maxLine bounds a line of a bundle file; a longer one is counted bad
// without being held.
var maxLine = 64 << 20

// eachLine calls fn for every non-empty line of path (1-based numbers;
// the line is valid during the call), and tooLong for a line over maxLine
// bytes, which it skips.
func eachLine(ctx context.Context, path string, fn func(n int, line []byte), tooLong func(n int)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var buf []byte
	for n := 1; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line, long, err := readLine(r, buf[:0])
		buf = line[:0]
		if long {
			tooLong(n)
		} else if t := bytes.TrimSpace(line); len(t) > 0 {
			fn(n, t)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// readLine appends the next line to buf, holding at most maxLine bytes:
// long reports a longer line, whose bytes are dropped.
func readLine(r *bufio.Reader, buf []byte) (line []byte, long bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !long && len(buf)+len(chunk) > maxLine {
			long, buf = true, buf[:0]
		}
		if !long {
			buf = append(buf, chunk...)
		}
		if err != bufio.ErrBufferFull {
			return buf, long, err
		}
	}
}
