// Package state keeps the embedded backend's loaded inputs: the graph parsed
// from a KG bundle and the index of a linked and embedded corpus, each saved
// as a snapshot named by the fingerprint of its inputs (file contents and the
// versions of what processed them), so that a changed input is loaded again
// and an unchanged one, in any folder, is not.
package state

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/docstore"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/retrieval/memindex"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// Fingerprint identifies input files by their content (and the versions of
// what processed them). The scheme names the snapshots in the state folder:
// changing it would orphan every snapshot already there.
func Fingerprint(files []string, versions ...string) (string, error) {
	h := sha256.New()
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return "", fmt.Errorf("input %s: %w", p, err)
		}
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("input %s: %w", p, err)
		}
		fmt.Fprintf(h, "|%s\n", filepath.Base(p))
	}
	for _, v := range versions {
		fmt.Fprintf(h, "v|%s\n", v)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Inputs are the embedded backend's inputs and where their snapshots live.
type Inputs struct {
	Bundle string // KG bundle folder
	Corpus string // corpus JSONL file
	// Extra are more corpus files, searched together with Corpus as one
	// corpus (a user's passages beside entity pages).
	Extra []string
	Dir   string    // the state folder
	Log   io.Writer // load statistics and progress; nil for none
	// CompactVectors and VectorDir are the embedded index's
	// (memindex.Params); the snapshot is the same either way.
	CompactVectors bool
	VectorDir      string
}

// params are the embedded index's parameters.
func (in Inputs) params() memindex.Params {
	p := memindex.DefaultParams()
	p.CompactVectors, p.VectorDir = in.CompactVectors, in.VectorDir
	return p
}

// KGFiles are the files of the bundle that the graph's fingerprint covers:
// the corpus beside it too, when there is one, for the lead names it gives
// the entities (bundle.Read).
func (in Inputs) KGFiles() []string {
	d := in.Bundle
	files := []string{filepath.Join(d, "triples.tsv"), filepath.Join(d, "entities.jsonl"), filepath.Join(d, "relations.json")}
	if c := filepath.Join(d, bundle.CorpusFile); fileExists(c) {
		files = append(files, c)
	}
	return files
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Graph returns the embedded graph, from its snapshot when the bundle is
// unchanged, else parsed from the bundle and snapshotted, with the bundle's
// fingerprint.
func (in Inputs) Graph(ctx context.Context) (*memkg.Graph, string, error) {
	key, err := Fingerprint(in.KGFiles(), kg.LeadNamesVersion)
	if err != nil {
		return nil, "", fmt.Errorf("knowledge graph: %w (set --data or --kg)", err)
	}
	snap := filepath.Join(in.Dir, "kg-"+key+".gob")
	if g, err := memkg.Load(snap); err == nil {
		// The snapshot keeps the read's counts, so a rerun reports the
		// bundle's bad and repeated lines as the first run did.
		if st, ok := g.BundleStats(); ok {
			in.report("load kg: %s (from the snapshot)", st)
		}
		return g, key, nil
	}
	start := time.Now()
	b, err := bundle.Read(ctx, in.Bundle)
	if err != nil {
		return nil, "", err
	}
	g := memkg.FromBundle(b)
	if err := g.Save(snap); err != nil {
		return nil, "", err
	}
	in.report("load kg: %s in "+time.Since(start).Round(time.Millisecond).String(), b.Stats)
	return g, key, nil
}

// report prints a bundle read's counts and the first problems to in.Log.
func (in Inputs) report(head string, st bundle.Stats) {
	log := in.Log
	if log == nil {
		return
	}
	fmt.Fprintf(log, head+"\n", in.Bundle)
	fmt.Fprintf(log, "  entities: read %d, loaded %d, duplicates %d, skipped as bad %d\n  triples: read %d, loaded %d, duplicates %d, skipped as bad %d\n  relations: loaded %d, duplicates %d, skipped as bad %d\n  lead names: %d entities (corpus lines skipped as bad: %d)\n",
		st.EntitiesRead, st.EntitiesLoaded, st.EntitiesDuplicate, st.EntitiesBad,
		st.TriplesRead, st.TriplesLoaded, st.TriplesDuplicate, st.TriplesBad,
		st.RelationsLoaded, st.RelationsDuplicate, st.RelationsBad, st.LeadNamed, st.DocumentsBad)
	for _, p := range st.Problems {
		fmt.Fprintln(log, "  skipped:", p)
	}
}

// Index returns the embedded index, from its snapshot when the corpus, the
// graph (kgKey) and the encoder are unchanged, else linked with g, embedded
// with enc and saved.
func (in Inputs) Index(ctx context.Context, g kg.Graph, kgKey string, enc scoring.Encoder) (*memindex.Index, error) {
	key, err := Fingerprint(in.corpusFiles(), kgKey, enc.Version())
	if err != nil {
		return nil, fmt.Errorf("corpus: %w (set --data or --corpus)", err)
	}
	snap := filepath.Join(in.Dir, "index-"+key+".gob")
	// The cache of vectors and links by content makes a changed corpus
	// cost only its changed documents.
	encKey := docstore.EncoderKey(enc)
	if x, err := memindex.Load(snap, in.params()); err == nil {
		if err := checkEncoder(snap, enc); err != nil {
			return nil, err
		}
		if !docstore.CacheFilled(in.Dir, encKey, kgKey) {
			// A snapshot from before the cache seeds it.
			docs, err := x.ReadAll(ctx)
			if err != nil {
				return nil, err
			}
			if err := seedCache(in.Dir, encKey, kgKey, docs); err != nil {
				return nil, err
			}
		}
		return x, nil
	}
	cache, err := docstore.OpenCache(in.Dir, encKey, kgKey)
	if err != nil {
		return nil, err
	}
	defer cache.Close()
	docs, err := in.prepareCorpus(ctx, g, enc, cache)
	if err != nil {
		return nil, err
	}
	x := memindex.New(in.params())
	if err := x.Put(ctx, docs); err != nil {
		return nil, err
	}
	if err := x.Save(snap); err != nil {
		return nil, err
	}
	if err := saveEncoder(snap, enc); err != nil {
		return nil, err
	}
	if err := x.Build(ctx); err != nil {
		return nil, err
	}
	return x, nil
}

func seedCache(dir, encKey, kgKey string, docs []retrieval.Document) error {
	c, err := docstore.OpenCache(dir, encKey, kgKey)
	if err != nil {
		return err
	}
	if err := c.Add(docs); err != nil {
		c.Close()
		return err
	}
	return c.Close()
}

// encoderRecord is what index-KEY.encoder.json says of the encoder that
// embedded index-KEY.gob. The snapshot's key already includes the
// encoder's version; the record names it for people and guards a snapshot
// copied or renamed by hand. Snapshots from before it have none.
type encoderRecord struct {
	Version  string `json:"version"`
	Identity string `json:"identity,omitempty"` // name and content hashes
}

func encoderRecordPath(snap string) string { return strings.TrimSuffix(snap, ".gob") + ".encoder.json" }

func recordOf(enc scoring.Encoder) encoderRecord {
	r := encoderRecord{Version: enc.Version()}
	if id, ok := enc.(interface{ Identity() string }); ok {
		r.Identity = id.Identity()
	}
	return r
}

func saveEncoder(snap string, enc scoring.Encoder) error {
	b, err := json.MarshalIndent(recordOf(enc), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(encoderRecordPath(snap), append(b, '\n'), 0o644)
}

// checkEncoder refuses a snapshot whose record names another encoder.
func checkEncoder(snap string, enc scoring.Encoder) error {
	b, err := os.ReadFile(encoderRecordPath(snap))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("index snapshot: %w", err)
	}
	var got encoderRecord
	if err := json.Unmarshal(b, &got); err != nil {
		return fmt.Errorf("index snapshot %s: %w", encoderRecordPath(snap), err)
	}
	want := recordOf(enc)
	if got.Version != want.Version || got.Identity != "" && want.Identity != "" && got.Identity != want.Identity {
		return fmt.Errorf("index snapshot %s was built with encoder %s [%s], not the configured %s [%s]: "+
			"set models.encoder (DMAR_ENCODER) back, or delete %s and its .encoder.json and rerun (dmar load corpus) to rebuild it with this encoder",
			snap, got.Version, got.Identity, want.Version, want.Identity, snap)
	}
	return nil
}

// corpusFiles are Corpus and Extra.
func (in Inputs) corpusFiles() []string { return append([]string{in.Corpus}, in.Extra...) }

// PrepareCorpus reads, links and embeds the corpus, with progress and counts.
func (in Inputs) PrepareCorpus(ctx context.Context, g kg.Graph, enc scoring.Encoder) ([]retrieval.Document, error) {
	return in.prepareCorpus(ctx, g, enc, nil)
}

func (in Inputs) prepareCorpus(ctx context.Context, g kg.Graph, enc scoring.Encoder, cache *docstore.Cache) ([]retrieval.Document, error) {
	docs, st, err := corpus.ReadFiles(ctx, in.corpusFiles())
	if err != nil {
		return nil, err
	}
	m := progress.New(in.Log, "load corpus", "docs", len(docs))
	o := corpus.Options{Meter: m}
	if cache != nil {
		o.Cache = cache
	}
	if err := corpus.Prepare(ctx, g, enc, docs, o); err != nil {
		return nil, err
	}
	m.Done()
	if log := in.Log; log != nil {
		fmt.Fprintf(log, "load corpus: %s\n  read %d, loaded %d, duplicates %d, skipped as bad %d\n", strings.Join(in.corpusFiles(), ", "), st.Read, st.Loaded, st.Duplicate, st.Bad)
		for _, p := range st.Problems {
			fmt.Fprintln(log, "  skipped:", p)
		}
	}
	return docs, nil
}
