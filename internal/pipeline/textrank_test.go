package pipeline_test

import (
	"context"
	"math"
	"testing"

	"github.com/dmar-kg/dmar/internal/corpus"
	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/scoring/scoringtest"
	"github.com/dmar-kg/dmar/internal/textgraph"
)

// filmTextGraph is codexm-film's text graph (the heuristic extractor, the
// test encoder), as dmar load corpus --text-graph heuristic builds it.
func filmTextGraph(t *testing.T) *textgraph.Memory {
	t.Helper()
	g, _ := film(t)
	dir, err := datapath.Dataset("codexm-film")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	docs, _, err := corpus.ReadFile(ctx, dir+"/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := corpus.Prepare(ctx, g, scoringtest.Words{}, docs, corpus.Options{}); err != nil {
		t.Fatal(err)
	}
	m := textgraph.NewMemory()
	b := textgraph.Builder{Extractor: textgraph.Heuristic{}, Linker: g, KG: g, Encoder: scoringtest.Words{}, SynonymMin: 0.8}
	if err := m.Put(ctx, b, docs); err != nil {
		t.Fatal(err)
	}
	return m
}

// With text_graph > 0 under the learned ranking (the dmar method's) and a
// text graph configured, the channel runs and its order is fused with the
// ranker's: every result the channel reached says its rank there, and its
// score is 1/(k + its rank by the ranker) + text_graph/(k + its rank in
// the channel), k the fusion's constant (60, or another the options set),
// the ranker's own score beside it; the results come in that order. The method leaves the channel off (its fusion did not hold on the
// report halves: docs/textgraph.md). Without a text graph a request that
// asks for the channel gets nothing from it and is told so
// (text_graph_unavailable); the ranker's scores stand.
func TestDmarFusesTheTextChannel(t *testing.T) {
	p := newPipeline(t, func(c *pipeline.Config) { c.Ranker = &ruleRanker{}; c.TextGraph = filmTextGraph(t) })
	o := p.Defaults().QuestionAware()
	if o.TextGraph != 0 {
		t.Fatalf("the dmar method sets text_graph %v, want 0 (off)", o.TextGraph)
	}
	o.TitleLinks = 0 // the fusion alone (titlelinks_test.go has the lifts)
	if res, err := p.Retrieve(context.Background(), nolan, o); err != nil {
		t.Fatal(err)
	} else if d := res.Results[0]; d.Breakdown.Text != nil || d.Breakdown.Rank.RankerScore != d.Score {
		t.Fatalf("text_graph 0: %s has text %+v, score %v against the ranker's %v", d.ID, d.Breakdown.Text, d.Score, d.Breakdown.Rank.RankerScore)
	}
	o.TextGraph = 0.75
	for _, k := range []int{pipeline.DefaultRRFK, 7} {
		o.RRFK = k
		res := retrieve(t, p, nolan, o)
		reached := 0
		for i, d := range res.Results {
			rb := d.Breakdown.Rank
			if rb == nil || rb.Score != d.Score {
				t.Fatalf("%s: rank breakdown %+v, score %v", d.ID, rb, d.Score)
			}
			if i > 0 && d.Score > res.Results[i-1].Score {
				t.Fatalf("results not in score order: %v after %v", d.Score, res.Results[i-1].Score)
			}
			own := d.Score
			if d.Breakdown.Text != nil {
				reached++
				if rb.TextRank != d.Breakdown.Text.Rank || rb.TextRank < 1 {
					t.Fatalf("%s: text rank %d in the rank breakdown, %d in the channel's", d.ID, rb.TextRank, d.Breakdown.Text.Rank)
				}
				own -= o.TextGraph / float64(k+rb.TextRank)
			} else if rb.TextRank != 0 {
				t.Fatalf("%s: text rank %d without the channel's breakdown", d.ID, rb.TextRank)
			}
			// what is left is 1/(k + the document's rank by the ranker)
			if r := 1/own - float64(k); r < 0.999 || math.Abs(r-math.Round(r)) > 1e-6 {
				t.Fatalf("%s: score %v (text rank %d) is no reciprocal-rank fusion: rank by the ranker %v", d.ID, d.Score, rb.TextRank, r)
			}
			if rb.RankerScore == d.Score {
				t.Fatalf("%s: the fused score equals the ranker's (%v)", d.ID, d.Score)
			}
		}
		if reached == 0 {
			t.Fatal("no result was reached by the text channel")
		}
	}

	q := newPipeline(t, func(c *pipeline.Config) { c.Ranker = &ruleRanker{} })
	res := retrieve(t, q, nolan, o)
	for _, d := range res.Results {
		if rb := d.Breakdown.Rank; rb == nil || rb.RankerScore != d.Score || rb.TextRank != 0 || d.Breakdown.Text != nil {
			t.Fatalf("without a text graph %s: score %v, rank breakdown %+v, text %+v", d.ID, d.Score, rb, d.Breakdown.Text)
		}
	}
	if !hasFallback(res, "text_graph_unavailable") {
		t.Fatalf("without a text graph: fallbacks %v, want text_graph_unavailable", fallbackNames(res))
	}
}
