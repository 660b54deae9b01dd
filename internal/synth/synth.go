// Package synth makes large corpora out of a real one, for measuring how
// search cost and quality grow with the corpus (dmar bench scale, docs/
// operations.md "Scaling out"). A synthetic document recombines real
// sentences, so term statistics stay those of real prose, and its vector
// mixes the real vectors of the documents its text came from plus seeded
// noise, so vectors keep the corpus's cluster structure without an encoder
// call each. Synthetic documents are never presented as real: their IDs
// start with "synthetic:" and their titles end with " (synthetic)".
package synth

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/retrieval"
)

// Prefix starts every synthetic document's ID.
const Prefix = "synthetic:"

// Config is how documents are made; the zero value takes the defaults.
type Config struct {
	Seed uint64
	// Mix is the weight of a document's base (its first sentence, its title,
	// its entities) against its donor: each later sentence comes from the
	// base with probability Mix, and the vector is Mix·base + (1-Mix)·donor
	// (unit vectors) plus noise. Default 0.75.
	Mix float64
	// Noise is the standard deviation of the noise added to each component
	// of the mixed unit vector (default 0.02: about 0.4 in norm for 384-d).
	Noise float64
	// MinSentences and MaxSentences bound a document's length (default 2, 4).
	MinSentences, MaxSentences int
}

func (c Config) withDefaults() Config {
	if c.Mix == 0 {
		c.Mix = 0.75
	}
	if c.Noise == 0 {
		c.Noise = 0.02
	}
	if c.MinSentences == 0 {
		c.MinSentences = 2
	}
	if c.MaxSentences < c.MinSentences {
		c.MaxSentences = max(4, c.MinSentences)
	}
	return c
}

// source is a real document cut into sentences, with its unit vector.
type source struct {
	doc       retrieval.Document
	sentences []string
	unit      []float64
}

// Maker makes synthetic documents from real ones (those with a title,
// text and vector). Document i depends on the seed and i alone, so any
// range of documents is made the same way in any order.
type Maker struct {
	cfg     Config
	sources []source
	dim     int
}

// NewMaker prepares the real documents. It returns nil when none has a
// vector.
func NewMaker(realDocs []retrieval.Document, cfg Config) *Maker {
	m := &Maker{cfg: cfg.withDefaults()}
	for _, d := range realDocs {
		if len(d.Vector) == 0 || d.Text == "" || (m.dim != 0 && len(d.Vector) != m.dim) {
			continue
		}
		m.dim = len(d.Vector)
		var n float64
		for _, f := range d.Vector {
			n += float64(f) * float64(f)
		}
		n = math.Sqrt(n)
		if n == 0 {
			continue
		}
		u := make([]float64, len(d.Vector))
		for i, f := range d.Vector {
			u[i] = float64(f) / n
		}
		m.sources = append(m.sources, source{doc: d, sentences: Sentences(d.Text), unit: u})
	}
	if len(m.sources) == 0 {
		return nil
	}
	return m
}

// Sentences splits text after ". ", "! " and "? ".
func Sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i+1 < len(text); i++ {
		if (text[i] == '.' || text[i] == '!' || text[i] == '?') && text[i+1] == ' ' {
			out = append(out, strings.TrimSpace(text[start:i+1]))
			start = i + 2
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// Doc is synthetic document i.
func (m *Maker) Doc(i int) retrieval.Document {
	c := m.cfg
	rng := rand.New(rand.NewPCG(c.Seed, uint64(i)))
	base := &m.sources[rng.IntN(len(m.sources))]
	donor := &m.sources[rng.IntN(len(m.sources))]
	n := c.MinSentences + rng.IntN(c.MaxSentences-c.MinSentences+1)
	parts := []string{base.sentences[0]}
	for len(parts) < n {
		s := donor
		if rng.Float64() < c.Mix {
			s = base
		}
		parts = append(parts, s.sentences[rng.IntN(len(s.sentences))])
	}
	v := make([]float32, m.dim)
	for j := range v {
		v[j] = float32(c.Mix*base.unit[j] + (1-c.Mix)*donor.unit[j] + c.Noise*rng.NormFloat64())
	}
	return retrieval.Document{
		ID:       Prefix + strconv.FormatUint(c.Seed, 10) + ":" + strconv.Itoa(i),
		Title:    base.doc.Title + " (synthetic)",
		Text:     strings.Join(parts, " "),
		Entities: base.doc.Entities,
		Vector:   v,
	}
}

// Corpus is a corpus of size documents: the real ones first (all of them,
// or the first size), then synthetic ones made from them.
func Corpus(realDocs []retrieval.Document, size int, cfg Config) []retrieval.Document {
	out := make([]retrieval.Document, 0, size)
	out = append(out, realDocs[:min(size, len(realDocs))]...)
	if len(out) == size {
		return out
	}
	m := NewMaker(realDocs, cfg)
	if m == nil {
		return out
	}
	for i := 0; len(out) < size; i++ {
		out = append(out, m.Doc(i))
	}
	return out
}
