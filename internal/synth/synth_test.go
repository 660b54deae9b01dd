package synth

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/vec"
)

func realDocs() []retrieval.Document {
	return []retrieval.Document{
		{ID: "Q1", Title: "Inception", Text: "Inception is a film. It was directed by Nolan. It stars DiCaprio.", Entities: []string{"Q2"}, Vector: []float32{1, 0, 0, 0}},
		{ID: "Q2", Title: "Christopher Nolan", Text: "Nolan is a director. He was born in London!", Entities: []string{"Q1"}, Vector: []float32{0, 2, 0, 0}},
		{ID: "Q3", Title: "Paris", Text: "Paris is the capital of France. It is on the Seine?", Vector: []float32{0, 0, 0, 3}},
		{ID: "Q4", Title: "No vector", Text: "Left out."},
	}
}

func TestCorpus(t *testing.T) {
	given := realDocs()
	c := Corpus(given, 40, Config{Seed: 7})
	if len(c) != 40 {
		t.Fatalf("%d documents, want 40", len(c))
	}
	for i, d := range c[:4] {
		if d.ID != given[i].ID {
			t.Fatalf("document %d is %s: the given documents come first", i, d.ID)
		}
	}
	sentences := map[string]bool{}
	for _, d := range given {
		for _, s := range Sentences(d.Text) {
			sentences[s] = true
		}
	}
	m := NewMaker(given, Config{Seed: 7})
	for i, d := range c[4:] {
		if !strings.HasPrefix(d.ID, Prefix+"7:") || !strings.HasSuffix(d.Title, " (synthetic)") {
			t.Errorf("document %d is not labelled synthetic: %s %q", i, d.ID, d.Title)
		}
		if d.Title == "No vector (synthetic)" {
			t.Errorf("a document without a vector was used")
		}
		n := 0
		for _, s := range Sentences(d.Text) {
			if !sentences[s] {
				t.Errorf("document %d: sentence %q is not a given one", i, s)
			}
			n++
		}
		if n < 2 || n > 4 {
			t.Errorf("document %d has %d sentences", i, n)
		}
		if again := m.Doc(i); again.ID != d.ID || again.Text != d.Text || again.Vector[0] != d.Vector[0] {
			t.Errorf("document %d is not made the same way again", i)
		}
		// The vector stays near its base's (the title's document).
		for _, r := range given[:3] {
			if r.Title+" (synthetic)" == d.Title {
				if cos := vec.Cosine64(d.Vector, r.Vector); cos < 0.6 {
					t.Errorf("document %d: cosine %.2f with its base", i, cos)
				}
			}
		}
	}
	if other := Corpus(given, 40, Config{Seed: 8}); other[10].Text == c[10].Text && other[11].Text == c[11].Text && other[12].Text == c[12].Text {
		t.Error("another seed made the same documents")
	}
}

// A space's vectors depend on the seed alone, have its dimension, and are
// clustered: a vector's nearest other among 2,000 is far closer than two
// independent random directions in 384 dimensions ever are.
func TestSpace(t *testing.T) {
	draw := func() [][]float32 {
		rng := rand.New(rand.NewPCG(3, 4))
		return NewSpace(rng, 384).Draw(rng, 2000)
	}
	a, b := draw(), draw()
	if len(a) != 2000 || len(a[0]) != 384 {
		t.Fatalf("%d vectors of %d dimensions, want 2000 of 384", len(a), len(a[0]))
	}
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Fatalf("vector %d differs between two draws with one seed", i)
		}
	}
	near := 0.0
	for i, v := range a[:200] {
		best := -1.0
		for j, w := range a {
			if j != i {
				best = max(best, vec.Cosine(v, w))
			}
		}
		near += best / 200
	}
	// Random directions: cosine about N(0, 1/384), so the best of 2,000 is
	// about 0.2.
	t.Logf("mean cosine to the nearest other vector: %.3f", near)
	if near < 0.5 {
		t.Errorf("mean cosine to the nearest other vector %.3f, want clustered (> 0.5)", near)
	}
}
