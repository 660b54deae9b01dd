package pipeline_test

import (
	"strings"
	"testing"

	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/pipeline"
)

// The dmar method lifts two pages its best document names (title_links 2)
// over codexm-film: each lifted result says which document named it (the
// first), that document's text holds its title, the lifted pages come
// right after it and take its score, and the rest keep the ranker's order
// and scores. With title_links 0 the order is the ranker's alone.
func TestDmarLiftsThePagesItsBestDocumentNames(t *testing.T) {
	p := newPipeline(t, func(c *pipeline.Config) { c.Ranker = &ruleRanker{} })
	o := p.Defaults().QuestionAware()
	if o.TitleLinks != 2 {
		t.Fatalf("the dmar method sets title_links %d, want 2", o.TitleLinks)
	}
	o.K = 20
	res := retrieve(t, p, nolan, o)
	top := res.Results[0]
	text := " " + kg.NormalizeForm(top.Text) + " "
	lifted, after := 0, false
	for i, d := range res.Results {
		rb := d.Breakdown.Rank
		if i > 0 && d.Score > res.Results[i-1].Score {
			t.Fatalf("results not in score order: %v after %v", d.Score, res.Results[i-1].Score)
		}
		if rb.NamedBy == "" {
			if i > 0 {
				after = true
			}
			if rb.Score != rb.RankerScore {
				t.Fatalf("%s (not lifted): score %v, the ranker's %v", d.ID, rb.Score, rb.RankerScore)
			}
			continue
		}
		lifted++
		title := strings.TrimSpace(strings.Split(d.Title, " (")[0])
		if rb.NamedBy != top.ID || !strings.Contains(text, " "+kg.NormalizeForm(title)+" ") {
			t.Fatalf("%s (%q) named by %s; the first result is %s, whose text does not name it", d.ID, d.Title, rb.NamedBy, top.ID)
		}
		if after || d.Score != top.Score {
			t.Fatalf("%s lifted to rank %d with score %v (the first's %v), after a result that was not", d.ID, d.Rank, d.Score, top.Score)
		}
	}
	if lifted != o.TitleLinks {
		t.Fatalf("%d pages that %s (%q) names were lifted, want %d", lifted, top.ID, top.Title, o.TitleLinks)
	}

	o.TitleLinks = 0
	off := retrieve(t, p, nolan, o)
	for i, d := range off.Results {
		if rb := d.Breakdown.Rank; rb.NamedBy != "" || rb.Score != rb.RankerScore || (i > 0 && d.Score > off.Results[i-1].Score) {
			t.Fatalf("title_links 0: %s at %d, score %v, rank breakdown %+v", d.ID, d.Rank, d.Score, rb)
		}
	}
}
