package textgraph

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"sync"

	"github.com/dmar-kg/dmar/internal/gobfile"
)

// Vectors remembers the encoder's vectors of node labels, so that a label is
// embedded once: across a build's batches, across builds (a corpus that
// gained documents is built again; dmar keeps the cache in the state folder
// beside the snapshot) and for documents written later. Embedding phrases
// is most of a build's time. Safe for concurrent use.
type Vectors struct {
	encoder string // the encoder's Version: another encoder's vectors are no use
	mu      sync.RWMutex
	m       map[string][]float32
}

// NewVectors is an empty cache for the encoder of version encoder.
func NewVectors(encoder string) *Vectors {
	return &Vectors{encoder: encoder, m: map[string][]float32{}}
}

// Len is how many labels the cache holds.
func (v *Vectors) Len() int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.m)
}

// get returns the cached vectors of labels (nil where none) and the labels
// it lacks, each once.
func (v *Vectors) get(labels []string) ([][]float32, []string) {
	out := make([][]float32, len(labels))
	var miss []string
	seen := map[string]bool{}
	v.mu.RLock()
	defer v.mu.RUnlock()
	for i, l := range labels {
		if x, ok := v.m[l]; ok {
			out[i] = x
		} else if !seen[l] {
			seen[l] = true
			miss = append(miss, l)
		}
	}
	return out, miss
}

func (v *Vectors) put(labels []string, vecs [][]float32) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for i, l := range labels {
		v.m[l] = vecs[i]
	}
}

// vectorFile is what Save writes: labels in order, so that two saves of one
// cache are the same bytes.
type vectorFile struct {
	Encoder string
	Labels  []string
	Vectors [][]float32
}

// Save writes the cache to path through a temporary file.
func (v *Vectors) Save(path string) error {
	v.mu.RLock()
	f := vectorFile{Encoder: v.encoder, Labels: make([]string, 0, len(v.m))}
	for l := range v.m {
		f.Labels = append(f.Labels, l)
	}
	sort.Strings(f.Labels)
	f.Vectors = make([][]float32, len(f.Labels))
	for i, l := range f.Labels {
		f.Vectors[i] = v.m[l]
	}
	v.mu.RUnlock()
	if err := gobfile.Write(path, f); err != nil {
		return fmt.Errorf("save the phrase vectors: %w", err)
	}
	return nil
}

// LoadVectors reads the cache Save wrote to path; no file, or one of another
// encoder, gives an empty cache for encoder.
func LoadVectors(path, encoder string) (*Vectors, error) {
	var f vectorFile
	if err := gobfile.Read(path, &f); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return NewVectors(encoder), nil
		}
		return nil, fmt.Errorf("phrase vectors %s: %w", path, err)
	}
	if f.Encoder != encoder {
		return NewVectors(encoder), nil
	}
	if len(f.Vectors) != len(f.Labels) {
		return nil, fmt.Errorf("phrase vectors %s: %d vectors for %d labels", path, len(f.Vectors), len(f.Labels))
	}
	v := NewVectors(encoder)
	for i, l := range f.Labels {
		v.m[l] = f.Vectors[i]
	}
	return v, nil
}
