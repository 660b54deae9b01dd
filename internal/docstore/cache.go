package docstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/scoring"
)

// Hash is a document's content hash: SHA-256 of its title and text (what
// linking and embedding read), the key of both caches.
type Hash [sha256.Size]byte

// ContentHash hashes what linking and embedding see of d.
func ContentHash(d retrieval.Document) Hash {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s|%d:%s", len(d.Title), d.Title, len(d.Text), d.Text)
	var out Hash
	h.Sum(out[:0])
	return out
}

// EncoderKey names an encoder's vectors in the cache: its version (which
// includes truncation and prefixes) and, where it has one, the identity of
// its files.
func EncoderKey(enc scoring.Encoder) string {
	k := enc.Version()
	if id, ok := enc.(interface{ Identity() string }); ok {
		k += "|" + id.Identity()
	}
	return k
}

// Cache keeps documents' vectors keyed by (encoder, content hash) and their
// links keyed by (KG fingerprint, content hash), in two append-only files
// of the state folder, so a restart after a corpus changed links and embeds
// only the documents whose content changed (internal/corpus uses it through
// corpus.Cache). It is safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	vectors map[Hash][]float32
	links   map[Hash][]string
	vlog    *log
	llog    *log
}

type cacheRecord struct {
	Keys     []Hash
	Vectors  [][]byte   // with the vector cache
	Entities [][]string // with the link cache
}

func cachePaths(dir, encKey, kgKey string) (vectors, links string) {
	short := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:8]) }
	return filepath.Join(dir, "cache", "vectors-"+short(encKey)+".log"), filepath.Join(dir, "cache", "links-"+short(kgKey)+".log")
}

// CacheFilled reports whether the caches of encKey and kgKey under dir
// hold anything, without reading them.
func CacheFilled(dir, encKey, kgKey string) bool {
	v, l := cachePaths(dir, encKey, kgKey)
	for _, p := range []string{v, l} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			return false
		}
	}
	return true
}

// OpenCache opens (creating) the caches of encoder encKey and graph kgKey
// under dir/cache.
func OpenCache(dir, encKey, kgKey string) (*Cache, error) {
	c := &Cache{vectors: map[Hash][]float32{}, links: map[Hash][]string{}}
	vpath, lpath := cachePaths(dir, encKey, kgKey)
	var err error
	// A cache loses nothing that cannot be recomputed, so it is not fsynced.
	c.vlog, _, err = openLog(vpath, logOptions{salvage: true}, func(p []byte) error {
		var r cacheRecord
		if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&r); err != nil {
			return nil // an unreadable record is only a cache miss
		}
		for i, k := range r.Keys {
			if i < len(r.Vectors) {
				c.vectors[k] = decodeVector(r.Vectors[i])
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vector cache: %w", err)
	}
	c.llog, _, err = openLog(lpath, logOptions{salvage: true}, func(p []byte) error {
		var r cacheRecord
		if err := gob.NewDecoder(bytes.NewReader(p)).Decode(&r); err != nil {
			return nil
		}
		for i, k := range r.Keys {
			if i < len(r.Entities) {
				c.links[k] = r.Entities[i]
			}
		}
		return nil
	})
	if err != nil {
		c.vlog.Close()
		return nil, fmt.Errorf("link cache: %w", err)
	}
	return c, nil
}

// Len is how many vectors and links the cache holds.
func (c *Cache) Len() (vectors, links int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.vectors), len(c.links)
}

// Lookup returns d's cached links and vector, each with whether it was found.
func (c *Cache) Lookup(d retrieval.Document) (entities []string, okLinks bool, vector []float32, okVector bool) {
	h := ContentHash(d)
	c.mu.Lock()
	defer c.mu.Unlock()
	entities, okLinks = c.links[h]
	vector, okVector = c.vectors[h]
	return entities, okLinks, vector, okVector
}

// Add records the links and vectors of linked and embedded documents that
// the cache lacks.
func (c *Cache) Add(docs []retrieval.Document) error {
	var vr, lr cacheRecord
	c.mu.Lock()
	for _, d := range docs {
		h := ContentHash(d)
		if _, ok := c.vectors[h]; !ok && len(d.Vector) > 0 {
			c.vectors[h] = d.Vector
			vr.Keys = append(vr.Keys, h)
			vr.Vectors = append(vr.Vectors, encodeVector(d.Vector))
		}
		if _, ok := c.links[h]; !ok {
			c.links[h] = d.Entities
			lr.Keys = append(lr.Keys, h)
			lr.Entities = append(lr.Entities, d.Entities)
		}
	}
	c.mu.Unlock()
	for _, x := range []struct {
		l *log
		r cacheRecord
	}{{c.vlog, vr}, {c.llog, lr}} {
		if len(x.r.Keys) == 0 {
			continue
		}
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(x.r); err != nil {
			return err
		}
		if err := x.l.Append(b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// Bytes is the size of the cache files.
func (c *Cache) Bytes() int64 { return c.vlog.Size() + c.llog.Size() }

// Close closes the cache files.
func (c *Cache) Close() error {
	err := c.vlog.Close()
	if e := c.llog.Close(); err == nil {
		err = e
	}
	return err
}

// encodeVector stores a vector as little-endian float32s (gob would spend
// about 5 bytes on each).
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
