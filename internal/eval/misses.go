package eval

import (
	"fmt"
	"io"
	"maps"
	"slices"
)

// Stages of the request a gold document can be lost at, in the order a
// question goes through them.
const (
	StageLinking = "linking" // the gold's topic entity was not linked, and no search found the gold
	StageRecall  = "recall"  // no search and no channel proposed the gold
	StageChannel = "channel" // the topic was linked, yet the graph channel did not reach the gold
	StageFusion  = "fusion"  // the gold was a candidate and ranked below k
)

// Causes of a miss, the classes the analysis counts.
const (
	CauseNothingLinked = "nothing linked"
	CauseWrongEntity   = "another entity linked"
	CauseTwoHops       = "answer two hops away"
	CauseNotConnected  = "gold not connected to the topic"
	CauseRelation      = "relation not matched"
	CauseNoCandidate   = "no candidate"
	CauseChannelRanked = "channel found it, fused below k"
	CauseRecallRanked  = "search found it, fused below k"
)

// Miss is why one gold document of a question is outside a system's top
// k: the first stage that lost it and the cause class.
type Miss struct {
	ID     string `json:"id"`
	System string `json:"system"`
	Doc    string `json:"doc"`
	Stage  string `json:"stage"`
	Cause  string `json:"cause"`
}

// MissTable counts a system's misses by stage and cause: gold documents
// outside the top k (Recall@k's misses), and the questions with none inside.
type MissTable struct {
	K         int                       `json:"k"`
	Gold      int                       `json:"gold"`      // gold documents, all questions
	Misses    int                       `json:"misses"`    // of them, outside the top k
	Questions int                       `json:"questions"` // questions with gold
	Empty     int                       `json:"empty"`     // of them, no gold in the top k
	Counts    map[string]map[string]int `json:"counts"`    // stage -> cause -> misses
}

// ClassifyMiss says where r (a question's record with the candidates each
// stage held, Record.Candidates) lost each gold document outside the top
// k; none when all are inside or the record carries no candidates. topics
// are the question's gold topic entities and connection how its gold hangs
// from them in the KG (kgqa: "1-hop", "2-hop", "not_connected"); both are
// empty for benchmarks without them.
func ClassifyMiss(r Record, k int, topics []string, connection string) []Miss {
	if r.Candidates == nil {
		return nil
	}
	top := r.RankedIDs[:min(k, len(r.RankedIDs))]
	linked := len(topics) == 0 || holds(recordQIDs(r), topics)
	var out []Miss
	for _, g := range r.Gold {
		if slices.Contains(top, g) {
			continue
		}
		m := Miss{ID: r.ID, System: r.System, Doc: g}
		gold := []string{g}
		switch {
		case holds(r.Candidates["kg"], gold) || holds(r.Candidates["text"], gold):
			m.Stage, m.Cause = StageFusion, CauseChannelRanked
		case holds(r.Candidates["recall"], gold) || holds(r.Candidates["second"], gold):
			m.Stage, m.Cause = StageFusion, CauseRecallRanked
		case !linked && len(r.QueryEntities) == 0:
			m.Stage, m.Cause = StageLinking, CauseNothingLinked
		case !linked:
			m.Stage, m.Cause = StageLinking, CauseWrongEntity
		case len(topics) > 0 && connection == "2-hop":
			m.Stage, m.Cause = StageChannel, CauseTwoHops
		case len(topics) > 0 && connection == "not_connected":
			m.Stage, m.Cause = StageChannel, CauseNotConnected
		case len(topics) > 0:
			m.Stage, m.Cause = StageChannel, CauseRelation
		default:
			m.Stage, m.Cause = StageRecall, CauseNoCandidate
		}
		out = append(out, m)
	}
	return out
}

// holds says whether ids and want share an element.
func holds(ids, want []string) bool {
	set := make(map[string]bool, len(want))
	for _, w := range want {
		set[w] = true
	}
	for _, id := range ids {
		if set[id] {
			return true
		}
	}
	return false
}

// summarizeMisses classifies every record that carries candidates, per
// system, at k; questions gives each record's topics and connection.
func summarizeMisses(recs []Record, questions map[string]Question, k int) (map[string]MissTable, []Miss) {
	tables := map[string]MissTable{}
	var misses []Miss
	for _, r := range recs {
		if r.Candidates == nil || len(r.Gold) == 0 {
			continue
		}
		t, ok := tables[r.System]
		if !ok {
			t = MissTable{K: k, Counts: map[string]map[string]int{}}
		}
		t.Questions++
		t.Gold += len(r.Gold)
		q := questions[r.ID]
		ms := ClassifyMiss(r, k, q.Topics, q.Strata["connection"])
		if len(ms) == len(r.Gold) {
			t.Empty++
		}
		for _, m := range ms {
			t.Misses++
			if t.Counts[m.Stage] == nil {
				t.Counts[m.Stage] = map[string]int{}
			}
			t.Counts[m.Stage][m.Cause]++
		}
		misses = append(misses, ms...)
		tables[r.System] = t
	}
	return tables, misses
}

// writeMisses prints the miss tables: per system, stage and cause, the
// misses and their share of all misses.
func writeMisses(w io.Writer, s *Summary) {
	if len(s.Misses) == 0 {
		return
	}
	systems := slices.Sorted(maps.Keys(s.Misses))
	fmt.Fprintf(w, "\n## Misses: where the gold was lost\n\n")
	fmt.Fprintf(w, "The first stage that lost each gold document outside the top k (Recall@k's misses; "+
		"misses.jsonl lists them).\n\n| system | stage | cause | misses | share |\n|---|---|---|---|---|\n")
	for _, name := range systems {
		t := s.Misses[name]
		fmt.Fprintf(w, "| %s | all | gold documents outside the top %d (questions with none inside: %d of %d) | %d of %d | |\n",
			name, t.K, t.Empty, t.Questions, t.Misses, t.Gold)
		for _, stage := range []string{StageLinking, StageRecall, StageChannel, StageFusion} {
			for _, c := range slices.Sorted(maps.Keys(t.Counts[stage])) {
				n := t.Counts[stage][c]
				fmt.Fprintf(w, "| %s | %s | %s | %d | %.0f%% |\n", name, stage, c, n, 100*float64(n)/float64(max(t.Misses, 1)))
			}
		}
	}
}
