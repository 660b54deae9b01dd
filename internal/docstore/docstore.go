// Package docstore is dmar's live document store: documents added, changed
// and deleted in a running service without rebuilding anything. A write is
// validated, linked to the knowledge graph and embedded (reusing the
// vectors and links of content seen before, from Cache), appended to an
// fsynced log in the state folder, then applied to the search index (and to
// Neo4j's MENTIONS edges, when configured) before it is acknowledged. On
// start the log is replayed over the index built from the corpus, so an
// acknowledged write survives a crash, and a batch cut off by one is
// discarded whole.
package docstore

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/errs"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/mentions"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// Index is the search backend the store writes through. Put replaces
// documents with existing IDs; Delete ignores unknown IDs and says how many
// it removed; Documents skips unknown IDs. The store gives every document
// it writes its Metadata (JSON null for none); an index that keeps it and
// returns it from Documents (weaviate, memindex) is where every store over
// it reads it, and where Documents returns nil the store falls back to its
// own log. memindex and weaviate implement it.
type Index interface {
	Put(ctx context.Context, docs []retrieval.Document) error
	Delete(ctx context.Context, ids []string) (int, error)
	Documents(ctx context.Context, ids []string) ([]retrieval.Document, error)
}

// Links mirrors documents' entity links into a graph database: Replace sets
// each document's MENTIONS edges to exactly its entities, Delete removes
// the documents and their edges.
type Links interface {
	ReplaceLinks(ctx context.Context, docs []retrieval.Document) error
	DeleteLinks(ctx context.Context, ids []string) error
}

// Config configures a Store.
type Config struct {
	// Dir is the folder of the store's log; empty keeps writes in memory
	// only (they are lost on restart).
	Dir     string
	Index   Index
	Graph   kg.Graph // links documents
	KGKey   string   // the graph's fingerprint, recorded with links
	Encoder scoring.Encoder
	Cache   *Cache // optional: earlier vectors and links by content
	Links   Links  // optional: Neo4j's MENTIONS edges
	// Mentions, when set, is an in-process mention index built from the
	// corpus (memkg.Mentions): the store replays its log into it on Open
	// and keeps it exact on every write, locating each document's
	// mentions with Graph (mentions.Locate).
	Mentions mentions.Writer
	// TextGraph, when set, is the in-process text graph built from the
	// corpus (textgraph.Live): like Mentions, the store replays its log
	// into it on Open and puts and deletes every write's passages.
	TextGraph TextGraph
	// TextGraphKeeps says that TextGraph keeps writes itself (Neo4j's): the
	// log is not replayed into it on Open.
	TextGraphKeeps bool
	// Replay applies the log to Index on Open: set for an index that does
	// not keep writes itself (the embedded one); Weaviate does.
	Replay bool
	// NoSync skips fsync (benchmarks of the rest only; not durable).
	NoSync bool
	Limits Limits
	Logger *slog.Logger
	// OnClose, when set, is called by Close after the log is closed: it
	// frees what the store alone used (its background encoder).
	OnClose func() error
}

// TextGraph is the text graph's writer: Put adds or replaces passages
// (extracting their phrases), Delete removes them.
type TextGraph interface {
	Put(ctx context.Context, docs []retrieval.Document) error
	Delete(ctx context.Context, ids []string) error
}

// Store is safe for concurrent use. Writers are serialised (the order of
// the log is the order of the index); searches go to the index, which
// applies each batch atomically.
type Store struct {
	cfg Config
	wmu sync.Mutex // one writer at a time
	log *log
	mu  sync.RWMutex
	// meta is the metadata of documents written here, from the log: what
	// Get returns for a document whose index does not know its metadata
	// (storedMeta).
	meta map[string]json.RawMessage
}

// Input is one document of a write.
type Input struct {
	ID       string          `json:"id"`
	Title    string          `json:"title"`
	Text     string          `json:"text"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// Rejection is a document that was not written, and why.
type Rejection struct {
	Index  int    `json:"index"` // position in the batch
	ID     string `json:"id,omitempty"`
	Field  string `json:"field"` // e.g. documents[3].text
	Code   errs.Code
	Reason string `json:"reason"`
}

// PutResult counts a batch upsert.
type PutResult struct {
	Created, Updated, Unchanged int
	Rejected                    []Rejection
}

// Document is a stored document with its links.
type Document struct {
	retrieval.Document
	Metadata json.RawMessage
}

// record is one logged batch: deletes first, then puts. It is the unit
// that replay applies wholly or not at all.
type record struct {
	Delete []string
	Put    []storedDoc
}

type storedDoc struct {
	ID, Title, Text string
	Metadata        []byte
	Entities        []string
	Vector          []byte
	Encoder, KG     string // what made Vector and Entities
}

// LogFile is the name of the store's log in its folder.
const LogFile = "documents.log"

// Open opens the store, replaying its log (into the index when cfg.Replay).
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Index == nil || cfg.Graph == nil || cfg.Encoder == nil {
		return nil, fmt.Errorf("docstore: index, graph and encoder are required")
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Store{cfg: cfg, meta: map[string]json.RawMessage{}}
	if cfg.Dir == "" {
		return s, nil
	}
	path := filepath.Join(cfg.Dir, LogFile)
	var recs []record
	l, torn, err := openLog(path, logOptions{sync: !cfg.NoSync}, func(p []byte) error {
		var r record
		if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&r); err != nil {
			return fmt.Errorf("a record that passed its checksum does not decode: %w", err)
		}
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("docstore: %w", err)
	}
	s.log = l
	if torn > 0 {
		cfg.Logger.Warn("docstore: discarded the torn tail of the log (a write cut off by a crash, never acknowledged)", "log", path, "bytes", torn)
	}
	if l.migrated {
		cfg.Logger.Info("docstore: rewrote the log in format 2 (record markers and header checksums, for repair)", "log", path, "records", len(recs))
	}
	st := newReplayState()
	for _, r := range recs {
		st.apply(r)
	}
	if cfg.Replay {
		if err := s.replay(ctx, recs); err != nil {
			l.Close()
			return nil, fmt.Errorf("docstore: replay %s: %w", path, err)
		}
	}
	if err := s.replayDerived(ctx, st); err != nil {
		l.Close()
		return nil, fmt.Errorf("docstore: replay %s into the mention index and text graph: %w", path, err)
	}
	for id, d := range st.live {
		if len(d.Metadata) > 0 {
			s.meta[id] = d.Metadata
		}
	}
	if len(recs) > 1 && l.Size() > 1<<20 && l.Size() > 2*st.bytes {
		if err := s.compact(st); err != nil {
			cfg.Logger.Warn("docstore: log compaction failed; the log stays as it was", "err", err)
		}
	}
	cfg.Logger.Info("docstore: opened", "log", path, "records", len(recs), "documents", len(st.live), "deleted", len(st.deleted), "bytes", s.log.Size())
	return s, nil
}

// replay applies the logged batches to the index in order, the puts
// between two deletes in one index write (each index write copies its
// tables), re-linking and re-embedding documents logged under another
// graph or encoder.
func (s *Store) replay(ctx context.Context, recs []record) error {
	var pending []storedDoc
	for _, r := range recs {
		if len(r.Delete) > 0 {
			if err := s.replayPuts(ctx, pending); err != nil {
				return err
			}
			pending = pending[:0]
			if _, err := s.cfg.Index.Delete(ctx, r.Delete); err != nil {
				return err
			}
		}
		pending = append(pending, r.Put...)
	}
	return s.replayPuts(ctx, pending)
}

func (s *Store) replayPuts(ctx context.Context, put []storedDoc) error {
	if len(put) == 0 {
		return nil
	}
	docs := make([]retrieval.Document, len(put))
	var stale []int
	enc := EncoderKey(s.cfg.Encoder)
	for i, d := range put {
		docs[i] = retrieval.Document{ID: d.ID, Title: d.Title, Text: d.Text, Metadata: indexMeta(d.Metadata), Entities: d.Entities, Vector: decodeVector(d.Vector)}
		if d.Encoder != enc || d.KG != s.cfg.KGKey {
			stale = append(stale, i)
		}
	}
	if len(stale) > 0 {
		part := make([]retrieval.Document, len(stale))
		for j, i := range stale {
			part[j] = retrieval.Document{ID: docs[i].ID, Title: docs[i].Title, Text: docs[i].Text, Metadata: docs[i].Metadata}
		}
		if err := s.prepare(ctx, part); err != nil {
			return err
		}
		for j, i := range stale {
			docs[i] = part[j]
		}
	}
	return s.cfg.Index.Put(ctx, docs)
}

func (s *Store) prepare(ctx context.Context, docs []retrieval.Document) error {
	o := corpus.Options{}
	if s.cfg.Cache != nil {
		o.Cache = s.cfg.Cache
	}
	return corpus.Prepare(ctx, s.cfg.Graph, s.cfg.Encoder, docs, o)
}

// Put upserts a batch. Documents that fail validation are rejected with
// their reasons and the rest written; documents identical to the stored
// ones (title, text, metadata) are counted unchanged and not rewritten.
// When it returns nil, the written documents are durable and searchable.
func (s *Store) Put(ctx context.Context, in []Input) (PutResult, error) {
	res, valid, err := s.validate(in)
	if err != nil || len(valid) == 0 {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	changed, meta, err := s.changes(ctx, valid, &res)
	if err != nil || len(changed) == 0 {
		return res, err
	}
	if err := s.write(ctx, changed, meta); err != nil {
		return PutResult{Rejected: res.Rejected}, err
	}
	return res, nil
}

// validate checks a batch: its size, then each document (Limits.check)
// and that no id repeats; it returns the rejections and the good documents.
func (s *Store) validate(in []Input) (PutResult, []Input, error) {
	var res PutResult
	if len(in) == 0 {
		return res, nil, errs.Field("documents", "must hold at least one document")
	}
	if len(in) > s.cfg.Limits.MaxBatch {
		return res, nil, &errs.Error{Code: errs.TooLarge, Field: "documents",
			Message: fmt.Sprintf("documents: %d in one batch, the limit is %d", len(in), s.cfg.Limits.MaxBatch)}
	}
	valid := make([]Input, 0, len(in))
	seen := map[string]int{}
	for i, d := range in {
		d, rej := s.cfg.Limits.check(i, d)
		if rej == nil {
			if j, dup := seen[d.ID]; dup {
				f := fmt.Sprintf("documents[%d].id", i)
				rej = &Rejection{Field: f, Code: errs.Invalid, Reason: fmt.Sprintf("%s: %q repeats documents[%d].id in the same batch", f, clip(d.ID, 80), j)}
			}
		}
		if rej != nil {
			rej.Index, rej.ID = i, clip(in[i].ID, 80)
			res.Rejected = append(res.Rejected, *rej)
			continue
		}
		seen[d.ID] = i
		valid = append(valid, d)
	}
	return res, valid, nil
}

// changes compares valid documents with the stored ones, counting each
// created, updated or unchanged in res, and returns those to write with
// their metadata. The caller holds wmu.
func (s *Store) changes(ctx context.Context, valid []Input, res *PutResult) ([]retrieval.Document, []json.RawMessage, error) {
	ids := make([]string, len(valid))
	for i, d := range valid {
		ids[i] = d.ID
	}
	old, err := s.cfg.Index.Documents(ctx, ids)
	if err != nil {
		return nil, nil, fmt.Errorf("read stored documents: %w", err)
	}
	oldByID := make(map[string]retrieval.Document, len(old))
	for _, d := range old {
		oldByID[d.ID] = d
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var changed []retrieval.Document
	var meta []json.RawMessage
	for _, d := range valid {
		o, exists := oldByID[d.ID]
		switch {
		case !exists:
			res.Created++
		case o.Title == d.Title && o.Text == d.Text && bytes.Equal(s.storedMeta(o), d.Metadata):
			res.Unchanged++
			continue
		default:
			res.Updated++
		}
		changed = append(changed, retrieval.Document{ID: d.ID, Title: d.Title, Text: d.Text, Metadata: indexMeta(d.Metadata)})
		meta = append(meta, d.Metadata)
	}
	return changed, meta, nil
}

// write links and embeds the changed documents, logs them as one record,
// then applies them to the index, the metadata and the graph's links. The
// caller holds wmu.
func (s *Store) write(ctx context.Context, changed []retrieval.Document, meta []json.RawMessage) error {
	// Linking and embedding run before any lock a search waits on.
	if err := s.prepare(ctx, changed); err != nil {
		return fmt.Errorf("link and embed documents: %w", err)
	}
	located, err := s.locate(ctx, changed)
	if err != nil {
		return err
	}
	r := record{Put: make([]storedDoc, len(changed))}
	enc := EncoderKey(s.cfg.Encoder)
	for i, d := range changed {
		r.Put[i] = storedDoc{ID: d.ID, Title: d.Title, Text: d.Text, Metadata: meta[i], Entities: d.Entities,
			Vector: encodeVector(d.Vector), Encoder: enc, KG: s.cfg.KGKey}
	}
	if err := s.append(r); err != nil {
		return err
	}
	// Once logged, the write is applied even if the caller has gone: the
	// index must agree with the log without waiting for a restart.
	ctx = context.WithoutCancel(ctx)
	if err := s.cfg.Index.Put(ctx, changed); err != nil {
		return fmt.Errorf("write documents to the index: %w", err)
	}
	if s.cfg.Mentions != nil {
		if err := s.cfg.Mentions.Replace(ctx, located); err != nil {
			return fmt.Errorf("write the documents' mentions: %w", err)
		}
	}
	if s.cfg.TextGraph != nil {
		if err := s.cfg.TextGraph.Put(ctx, changed); err != nil {
			return fmt.Errorf("write the documents' passages to the text graph: %w", err)
		}
	}
	s.mu.Lock()
	for i, d := range changed {
		if len(meta[i]) > 0 {
			s.meta[d.ID] = meta[i]
		} else {
			delete(s.meta, d.ID)
		}
	}
	s.mu.Unlock()
	if s.cfg.Links != nil {
		if err := s.cfg.Links.ReplaceLinks(ctx, changed); err != nil {
			return fmt.Errorf("write document links to the graph: %w", err)
		}
	}
	return nil
}

// Delete removes documents by ID, all or none: when one is unknown, it
// deletes nothing and returns a NotFound error naming the unknown ones; an
// id no document can have (Limits.CheckID) is an error naming ids[i].
func (s *Store) Delete(ctx context.Context, ids []string) (int, error) {
	if len(ids) == 0 {
		return 0, errs.Field("ids", "must hold at least one id")
	}
	if len(ids) > s.cfg.Limits.MaxBatch {
		return 0, &errs.Error{Code: errs.TooLarge, Field: "ids", Message: fmt.Sprintf("ids: %d in one batch, the limit is %d", len(ids), s.cfg.Limits.MaxBatch)}
	}
	for i, id := range ids {
		if code, why := s.cfg.Limits.CheckID(id); why != "" {
			f := fmt.Sprintf("ids[%d]", i)
			return 0, &errs.Error{Code: code, Field: f, Message: f + ": " + why + "; nothing was deleted"}
		}
	}
	uniq := make([]string, 0, len(ids))
	seen := map[string]bool{}
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			uniq = append(uniq, id)
		}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	found, err := s.cfg.Index.Documents(ctx, uniq)
	if err != nil {
		return 0, fmt.Errorf("read stored documents: %w", err)
	}
	if len(found) < len(uniq) {
		have := map[string]bool{}
		for _, d := range found {
			have[d.ID] = true
		}
		var missing []string
		for _, id := range uniq {
			if !have[id] {
				missing = append(missing, fmt.Sprintf("%q", clip(id, 80)))
			}
		}
		shown := missing
		if len(shown) > 10 {
			shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(missing)-10))
		}
		return 0, &errs.Error{Code: errs.NotFound, Field: "id", Message: fmt.Sprintf("no document with id %s; nothing was deleted", joinList(shown))}
	}
	if err := s.append(record{Delete: uniq}); err != nil {
		return 0, err
	}
	ctx = context.WithoutCancel(ctx)
	n, err := s.cfg.Index.Delete(ctx, uniq)
	if err != nil {
		return 0, fmt.Errorf("delete documents from the index: %w", err)
	}
	if s.cfg.Mentions != nil {
		if err := s.cfg.Mentions.Delete(ctx, uniq); err != nil {
			return n, fmt.Errorf("delete the documents' mentions: %w", err)
		}
	}
	if s.cfg.TextGraph != nil {
		if err := s.cfg.TextGraph.Delete(ctx, uniq); err != nil {
			return n, fmt.Errorf("delete the documents' passages from the text graph: %w", err)
		}
	}
	s.mu.Lock()
	for _, id := range uniq {
		delete(s.meta, id)
	}
	s.mu.Unlock()
	if s.cfg.Links != nil {
		if err := s.cfg.Links.DeleteLinks(ctx, uniq); err != nil {
			return n, fmt.Errorf("delete document links from the graph: %w", err)
		}
	}
	return n, nil
}

// Get returns a stored document (any document of the index, the corpus's
// included) or a NotFound error naming the id.
func (s *Store) Get(ctx context.Context, id string) (Document, error) {
	ds, err := s.cfg.Index.Documents(ctx, []string{id})
	if err != nil {
		return Document{}, err
	}
	if len(ds) == 0 {
		return Document{}, &errs.Error{Code: errs.NotFound, Field: "id", Message: fmt.Sprintf("no document with id %q", clip(id, 80))}
	}
	s.mu.RLock()
	m := s.storedMeta(ds[0])
	s.mu.RUnlock()
	d := ds[0]
	d.Metadata = nil
	return Document{Document: d, Metadata: m}, nil
}

// noMeta is the metadata the index is given for a document without any:
// JSON null, so that an index that keeps metadata knows there is none
// (rather than not knowing, as for documents it held before keeping it).
var noMeta = json.RawMessage("null")

func indexMeta(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return noMeta
	}
	return m
}

// storedMeta is a stored document's metadata (nil: none): the index's,
// where it keeps metadata (Weaviate: written by whichever replica wrote
// the document), else what this store's log recorded. The caller holds mu.
func (s *Store) storedMeta(d retrieval.Document) json.RawMessage {
	switch {
	case d.Metadata == nil:
		return s.meta[d.ID]
	case bytes.Equal(d.Metadata, noMeta):
		return nil
	default:
		return d.Metadata
	}
}

// Entities names a document's linked entities (those the graph knows).
func (s *Store) Entities(ctx context.Context, qids []string) (map[string]kg.Entity, error) {
	return s.cfg.Graph.Entities(ctx, qids)
}

// LogBytes is the size of the log.
func (s *Store) LogBytes() int64 {
	if s.log == nil {
		return 0
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.log.Size()
}

// Close closes the log, then calls Config.OnClose.
func (s *Store) Close() error {
	var err error
	if s.log != nil {
		err = s.log.Close()
	}
	if s.cfg.OnClose != nil {
		err = errors.Join(err, s.cfg.OnClose())
	}
	return err
}

func (s *Store) append(r record) error {
	if s.log == nil {
		return nil
	}
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(r); err != nil {
		return fmt.Errorf("encode log record: %w", err)
	}
	if err := s.log.Append(b.Bytes()); err != nil {
		return errs.Wrap(errs.Unavailable, err, "the document log could not be written")
	}
	return nil
}

// replayState is the outcome of a log: the live documents in the order
// the index holds them, and the IDs deleted at some point.
type replayState struct {
	live    map[string]storedDoc
	order   map[string]int // when each live document was (re)created
	next    int
	deleted map[string]bool
	bytes   int64
}

func newReplayState() *replayState {
	return &replayState{live: map[string]storedDoc{}, order: map[string]int{}, deleted: map[string]bool{}}
}

func (st *replayState) apply(r record) {
	for _, id := range r.Delete {
		if d, ok := st.live[id]; ok {
			st.bytes -= d.size()
			delete(st.live, id)
			delete(st.order, id)
		}
		st.deleted[id] = true
	}
	for _, d := range r.Put {
		if o, ok := st.live[d.ID]; ok {
			st.bytes -= o.size()
		} else {
			st.order[d.ID] = st.next
			st.next++
		}
		st.live[d.ID] = d
		st.bytes += d.size()
	}
}

func (d storedDoc) size() int64 {
	return int64(len(d.ID) + len(d.Title) + len(d.Text) + len(d.Metadata) + len(d.Vector) + 16*len(d.Entities) + 64)
}

// compact rewrites the log as one record with the same outcome: the IDs
// ever deleted (so a corpus document deleted and put again keeps its new
// place) and the live documents in the order they were created.
func (s *Store) compact(st *replayState) error {
	r := record{}
	for id := range st.deleted {
		r.Delete = append(r.Delete, id)
	}
	sort.Strings(r.Delete)
	for _, d := range st.live {
		r.Put = append(r.Put, d)
	}
	sort.Slice(r.Put, func(i, j int) bool { return st.order[r.Put[i].ID] < st.order[r.Put[j].ID] })
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(r); err != nil {
		return err
	}
	path := s.log.path
	before := s.log.Size()
	if err := s.log.Close(); err != nil {
		return err
	}
	if err := rewriteLog(path, [][]byte{b.Bytes()}); err != nil {
		return err
	}
	l, _, err := openLog(path, logOptions{sync: !s.cfg.NoSync}, func([]byte) error { return nil })
	if err != nil {
		return err
	}
	s.log = l
	s.cfg.Logger.Info("docstore: compacted the log", "log", path, "bytes_before", before, "bytes_after", l.Size())
	return nil
}
