package pipeline

import (
	"fmt"
	"reflect"
	"testing"
)

func linkPool(docs ...Doc) ([]poolDoc, []int, []float64) {
	pool := make([]poolDoc, len(docs))
	order := make([]int, len(docs))
	scores := make([]float64, len(docs))
	for i, d := range docs {
		pool[i], order[i], scores[i] = poolDoc{doc: d}, i, float64(len(docs)-i)
	}
	return pool, order, scores
}

// At most max pages the best document names follow it, the best-ranked
// of them first, with its score; a title's parenthesised qualifier is left
// out, a title must occur as whole words, and titles that cannot be linked
// (one character, stopwords only) are not.
func TestTitleLinks(t *testing.T) {
	docs := []Doc{
		{ID: "andrews", Title: "Charles Andrews", Text: "Andrews graduated from Hebron Academy in 1968, studied the planet Mercury and lived in Maine."},
		{ID: "worksop", Title: "Worksop College Preparatory School", Text: "A preparatory school for boys; it names Charles Andrews."},
		{ID: "the", Title: "The", Text: "An article."},
		{ID: "mercury", Title: "Mercury (planet)", Text: "The smallest planet."},
		{ID: "bron", Title: "Bron", Text: "A town; not a whole word of Hebron."},
		{ID: "hebron", Title: "Hebron Academy", Text: "A college preparatory boys' school in Maine."},
		{ID: "maine", Title: "Maine", Text: "A state."},
	}
	for _, c := range []struct {
		max   int
		order []string
		named map[int]string
	}{
		{1, []string{"andrews", "mercury", "worksop", "the", "bron", "hebron", "maine"}, map[int]string{3: "andrews"}},
		{2, []string{"andrews", "mercury", "hebron", "worksop", "the", "bron", "maine"}, map[int]string{3: "andrews", 5: "andrews"}},
		{5, []string{"andrews", "mercury", "hebron", "maine", "worksop", "the", "bron"}, map[int]string{3: "andrews", 5: "andrews", 6: "andrews"}},
	} {
		pool, order, scores := linkPool(docs...)
		named := titleLinks(pool, order, scores, c.max)
		ids := make([]string, len(order))
		for n, i := range order {
			ids[n] = pool[i].doc.ID
		}
		if !reflect.DeepEqual(ids, c.order) || !reflect.DeepEqual(named, c.named) {
			t.Fatalf("max %d: order %v named by %v, want %v %v", c.max, ids, named, c.order, c.named)
		}
		for n := 1; n < len(order); n++ {
			if scores[order[n]] > scores[order[n-1]] {
				t.Fatalf("max %d: scores rise with rank: %v", c.max, scores)
			}
		}
		for i := range named {
			if scores[i] != scores[0] {
				t.Fatalf("max %d: %s has score %v, the best document's is %v", c.max, pool[i].doc.ID, scores[i], scores[0])
			}
		}
		if scores[1] != 6 {
			t.Fatalf("max %d: a page not lifted changed its score: %v", c.max, scores)
		}
	}
}

// Nothing moves with title_links 0, when no page is named, or from below
// the window (the ranker's 20 best).
func TestTitleLinksLeaveTheOrder(t *testing.T) {
	docs := []Doc{{ID: "top", Title: "Top", Text: "It names Far Page."}}
	for i := 1; i < titleLinkWindow; i++ {
		docs = append(docs, Doc{ID: fmt.Sprint(i), Title: fmt.Sprintf("Filler %d", i)})
	}
	docs = append(docs, Doc{ID: "far", Title: "Far Page"})
	for _, top := range []int{0, 1} {
		pool, order, scores := linkPool(docs...)
		before := append([]int(nil), order...)
		if named := titleLinks(pool, order, scores, top); named != nil || !reflect.DeepEqual(order, before) {
			t.Fatalf("title_links %d: named %v, order %v", top, named, order)
		}
	}
	pool, order, scores := linkPool(docs[0], docs[len(docs)-1])
	if named := titleLinks(pool, order, scores, 1); named[1] != "top" {
		t.Fatalf("inside the window: named %v", named)
	}
}
