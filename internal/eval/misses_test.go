package eval

import (
	"bytes"
	"strings"
	"testing"
)

func TestClassifyMiss(t *testing.T) {
	base := func() Record {
		return Record{ID: "q", System: "dmar", Gold: []string{"G"}, RankedIDs: []string{"a", "b", "c", "G"},
			QueryEntities: []string{`T "topic"`}, Candidates: map[string][]string{"recall": {"a", "b"}}}
	}
	cases := []struct {
		name       string
		edit       func(*Record)
		topics     []string
		connection string
		stage      string
		cause      string
		missed     bool
	}{
		{name: "gold in the top k is no miss", edit: func(r *Record) { r.RankedIDs = []string{"G"} }, missed: false},
		{name: "no candidates recorded", edit: func(r *Record) { r.Candidates = nil }, missed: false},
		{name: "no gold", edit: func(r *Record) { r.Gold = nil }, missed: false},
		{name: "a channel proposed it", edit: func(r *Record) { r.Candidates["kg"] = []string{"G"} },
			topics: []string{"T"}, stage: StageFusion, cause: CauseChannelRanked, missed: true},
		{name: "the search proposed it", edit: func(r *Record) { r.Candidates["recall"] = []string{"G"} },
			stage: StageFusion, cause: CauseRecallRanked, missed: true},
		{name: "nothing linked", edit: func(r *Record) { r.QueryEntities = nil },
			topics: []string{"T"}, stage: StageLinking, cause: CauseNothingLinked, missed: true},
		{name: "another entity linked", edit: func(*Record) {},
			topics: []string{"U"}, stage: StageLinking, cause: CauseWrongEntity, missed: true},
		{name: "two hops", edit: func(*Record) {}, topics: []string{"T"}, connection: "2-hop",
			stage: StageChannel, cause: CauseTwoHops, missed: true},
		{name: "not connected", edit: func(*Record) {}, topics: []string{"T"}, connection: "not_connected",
			stage: StageChannel, cause: CauseNotConnected, missed: true},
		{name: "one hop, relation not matched", edit: func(*Record) {}, topics: []string{"T"}, connection: "1-hop",
			stage: StageChannel, cause: CauseRelation, missed: true},
		{name: "no topics: the search lost it", edit: func(*Record) {},
			stage: StageRecall, cause: CauseNoCandidate, missed: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := base()
			c.edit(&r)
			ms := ClassifyMiss(r, 3, c.topics, c.connection)
			var m Miss
			if len(ms) > 0 {
				m = ms[0]
			}
			if (len(ms) == 1) != c.missed || len(ms) > 1 || m.Stage != c.stage || m.Cause != c.cause {
				t.Fatalf("got %+v, want (%q, %q, missed %v)", ms, c.stage, c.cause, c.missed)
			}
		})
	}
}

// Each gold document outside the top k is a miss of its own, classified by
// where it (not the question's other gold) was lost.
func TestClassifyMissPerGoldDocument(t *testing.T) {
	r := Record{ID: "q", System: "dmar", Gold: []string{"A", "B", "C"}, RankedIDs: []string{"A", "x"},
		Candidates: map[string][]string{"recall": {"x", "B"}, "text": {"C"}}}
	ms := ClassifyMiss(r, 2, nil, "")
	if len(ms) != 2 || ms[0].Doc != "B" || ms[0].Cause != CauseRecallRanked || ms[1].Doc != "C" || ms[1].Cause != CauseChannelRanked {
		t.Fatalf("misses %+v", ms)
	}
}

func TestSummarizeMissesCountsPerSystem(t *testing.T) {
	recs := []Record{
		{ID: "1", System: "dmar", Gold: []string{"G"}, RankedIDs: []string{"G"}, Candidates: map[string][]string{}},
		{ID: "2", System: "dmar", Gold: []string{"G"}, RankedIDs: []string{"x"}, Candidates: map[string][]string{"kg": {"G"}}},
		{ID: "3", System: "dmar", Gold: []string{"G"}, RankedIDs: []string{"x"}, Candidates: map[string][]string{}},
		{ID: "1", System: "dense", Gold: []string{"G"}, RankedIDs: []string{"x"}}, // no candidates: not analysed
	}
	tables, misses := summarizeMisses(recs, map[string]Question{}, 1)
	if len(tables) != 1 || len(misses) != 2 {
		t.Fatalf("tables %v misses %v", tables, misses)
	}
	d := tables["dmar"]
	if d.Questions != 3 || d.Gold != 3 || d.Empty != 2 || d.Misses != 2 || d.Counts[StageFusion][CauseChannelRanked] != 1 || d.Counts[StageRecall][CauseNoCandidate] != 1 {
		t.Fatalf("dmar table %+v", d)
	}
	var buf bytes.Buffer
	writeMisses(&buf, &Summary{Misses: tables})
	if !strings.Contains(buf.String(), "| dmar | fusion | "+CauseChannelRanked+" | 1 | 50% |") {
		t.Fatalf("table:\n%s", buf.String())
	}
}
