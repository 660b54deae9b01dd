package pipeline

import (
	"strings"

	"github.com/dmar-kg/dmar/internal/kg"
)

// Title links (option title_links; beyond the paper): the pages that the
// final order's best document names follow it, at most title_links of
// them. A document is named by another when its title, less a
// parenthesised qualifier ("Mercury (planet)"), occurs in the other's
// text as whole words. In a corpus of titled pages (Wikipedia's, a
// knowledge base's, a user's entity pages) this is the mention bridge in
// the text's own terms: a multi-hop question's first document names the
// page that answers its next hop ("Charles Andrews graduated from what
// college preparatory boys' school?": his page names Hebron Academy, whose
// page the question does not name and the cosine ranks low). The cap
// keeps a long page that names dozens of others (a country's) from
// pushing the passages that answer down. Chosen on the tune halves and
// kgqa's train and dev splits (docs/textgraph.md).

// titleLinkWindow is how far down the order a named page may be lifted
// from: the ranker's 20 best.
const titleLinkWindow = 20

// titleLinks reorders order (pool indexes, best first) so that the first
// limit pages that the best document names follow it, in their own order;
// each takes the best document's score, so that scores still fall with
// rank. It returns, by pool index, the ID of the document that named each
// lifted page.
func titleLinks(pool []poolDoc, order []int, scores []float64, limit int) map[int]string {
	if limit <= 0 || len(order) < 2 {
		return nil
	}
	best := pool[order[0]].doc
	text := " " + kg.NormalizeForm(best.Text) + " "
	namedBy := map[int]string{}
	var lifted, rest []int
	for n := 1; n < len(order); n++ {
		i := order[n]
		if n < titleLinkWindow && len(lifted) < limit {
			if t := titleForm(pool[i].doc.Title); t != "" && strings.Contains(text, " "+t+" ") {
				namedBy[i] = best.ID
				lifted = append(lifted, i)
				continue
			}
		}
		rest = append(rest, i)
	}
	if len(lifted) == 0 {
		return nil
	}
	for _, i := range lifted {
		scores[i] = scores[order[0]]
	}
	copy(order[1:], append(lifted, rest...))
	return namedBy
}

// titleForm is a title's normalised form without a trailing parenthesised
// qualifier; "" when that form could not be linked (kg.Linkable: one
// character, only stopwords).
func titleForm(title string) string {
	t := strings.TrimSpace(title)
	if strings.HasSuffix(t, ")") {
		if i := strings.LastIndex(t, " ("); i > 0 {
			t = t[:i]
		}
	}
	f := kg.NormalizeForm(t)
	if !kg.Linkable(f) {
		return ""
	}
	return f
}
