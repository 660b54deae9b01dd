package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dmar-kg/dmar/internal/eval"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/synth"
)

// TraceLoss says where dmar's gold documents went between the smallest
// corpus (first, n0 documents) and a larger one (cur, n): which left the
// top 5, how far down they went, and what took their places: synthetic
// documents or real ones, copies of the question's own gold (a synthetic
// document keeps its base's title, first sentence, entities and most of
// its vector) and which source reached them (the graph channel, "kg").
// It also says whether the default request's stage-1 search found each
// dropped one in either corpus: a gold document the search stops finding
// is lost at recall, one it still finds is lost by the final ranking.
func TraceLoss(small, large ScaleRow) string {
	before := map[string]eval.Record{}
	for _, r := range small.records {
		before[r.ID] = r
	}
	t := lossTrace{searchedBefore: small.searched, searchedAfter: large.searched}
	for _, r := range large.records {
		if b, ok := before[r.ID]; ok {
			t.add(b, r, large.titles)
		}
	}
	return t.String(small.Size, large.Size)
}

type lossTrace struct {
	gold, dropped, gained, questions int
	ranks                            []int // 1-based ranks in the top 20 of the dropped that stayed in it
	gone                             int   // dropped ones no longer in the top 20
	viaKG                            int   // dropped ones the graph channel had reached in the smaller corpus
	searchedBefore, searchedAfter    map[string]bool
	wasSearched, stillSearched       int // dropped ones the stage-1 search found in the smaller corpus, and still finds
	goneUnsearched                   int // dropped ones out of the top 20 that the search no longer finds
	above, synthetic, copies, kg     int // the non-gold documents of the losing questions' top 5
}

func (t *lossTrace) add(b, r eval.Record, titles map[string]string) {
	gold := map[string]bool{}
	base := map[string]bool{}
	for _, g := range r.Gold {
		gold[g] = true
		base[titles[g]] = true
	}
	top := func(ids []string) []string { return ids[:min(5, len(ids))] }
	lost := false
	for i, id := range top(b.RankedIDs) {
		if !gold[id] {
			continue
		}
		t.gold++
		if slices.Contains(top(r.RankedIDs), id) {
			continue
		}
		t.dropped++
		lost = true
		if i < len(b.ResultStages) && strings.Contains(b.ResultStages[i], "kg") {
			t.viaKG++
		}
		key := r.ID + "\x00" + id
		if t.searchedBefore[key] {
			t.wasSearched++
		}
		if t.searchedAfter[key] {
			t.stillSearched++
		}
		if i := slices.Index(r.RankedIDs, id); i >= 0 {
			t.ranks = append(t.ranks, i+1)
		} else {
			t.gone++
			if !t.searchedAfter[key] {
				t.goneUnsearched++
			}
		}
	}
	for _, id := range top(r.RankedIDs) {
		if gold[id] && !slices.Contains(top(b.RankedIDs), id) {
			t.gained++
		}
	}
	if !lost {
		return
	}
	t.questions++
	for i, id := range top(r.RankedIDs) {
		if gold[id] {
			continue
		}
		t.above++
		if strings.HasPrefix(id, synth.Prefix) {
			t.synthetic++
			if base[strings.TrimSuffix(titles[id], " (synthetic)")] {
				t.copies++
			}
		}
		if i < len(r.ResultStages) && strings.Contains(r.ResultStages[i], "kg") {
			t.kg++
		}
	}
}

func (t lossTrace) String(n0, n int) string {
	slices.Sort(t.ranks)
	med := "-"
	if len(t.ranks) > 0 {
		med = fmt.Sprint(t.ranks[len(t.ranks)/2])
	}
	return fmt.Sprintf("trace: dmar's gold at %d against %d documents: %d gold documents in the top 5 at %d, %d of them out of it at %d (in %d questions; %d of them reached by the graph channel at %d) and %d others in; of those out, %d still in the top 20 (median rank %s), %d not (%d of these no longer found by the stage-1 search); the stage-1 search found %d of the %d at %d and finds %d at %d; in those questions' top 5 now, %d documents that are not gold: %d synthetic (%d copies of the question's own gold, by base title), %d real; %d of them reached by the graph channel",
		n, n0, t.gold, n0, t.dropped, n, t.questions, t.viaKG, n0, t.gained, len(t.ranks), med, t.gone, t.goneUnsearched, t.wasSearched, t.dropped, n0, t.stillSearched, n, t.above, t.synthetic, t.copies, t.above-t.synthetic, t.kg)
}

// resultTitles are the titles of the documents that recs rank or name as
// gold, read from the index x that ranked them.
func resultTitles(ctx context.Context, x retrieval.Index, recs []eval.Record) (map[string]string, error) {
	want := map[string]string{}
	for _, r := range recs {
		for _, id := range r.RankedIDs {
			want[id] = ""
		}
		for _, id := range r.Gold {
			want[id] = ""
		}
	}
	docs, err := x.Documents(ctx, slices.Collect(maps.Keys(want)))
	if err != nil {
		return nil, fmt.Errorf("the ranked documents' titles: %w", err)
	}
	for _, d := range docs {
		want[d.ID] = d.Title
	}
	return want, nil
}
