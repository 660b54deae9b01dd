package eval

import (
	"fmt"
	"io"
	"sort"
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

// Miss is why one question's gold documents are outside a system's top k:
// the first stage that lost them and the cause class.
type Miss struct {
	ID     string `json:"id"`
	System string `json:"system"`
	Stage  string `json:"stage"`
	Cause  string `json:"cause"`
}

// MissTable counts a system's misses by stage and cause.
type MissTable struct {
	K         int                       `json:"k"`
	Questions int                       `json:"questions"` // questions with gold
	Misses    int                       `json:"misses"`    // of them, no gold in the top k
	Counts    map[string]map[string]int `json:"counts"`    // stage -> cause -> misses
}

// ClassifyMiss says where r (a question's record with the candidates each
// stage held, Record.Candidates) lost its gold, or ok=false when a gold
// document is in the top k or the record carries no candidates. topics are the question's
// gold topic entities and connection how the gold hangs from them in the KG
// (kgqa: "1-hop", "2-hop", "not_connected"); both are empty for benchmarks
// without them.
func ClassifyMiss(r Record, k int, topics []string, connection string) (Miss, bool) {
	if len(r.Gold) == 0 || r.Candidates == nil || hitAt(r.RankedIDs, r.Gold, k) {
		return Miss{}, false
	}
	m := Miss{ID: r.ID, System: r.System}
	inKG, inText := holds(r.Candidates["kg"], r.Gold), holds(r.Candidates["text"], r.Gold)
	inRecall := holds(r.Candidates["recall"], r.Gold) || holds(r.Candidates["second"], r.Gold)
	switch {
	case inKG || inText:
		m.Stage, m.Cause = StageFusion, CauseChannelRanked
	case inRecall:
		m.Stage, m.Cause = StageFusion, CauseRecallRanked
	case len(topics) > 0 && !holds(recordQIDs(r), topics):
		m.Stage, m.Cause = StageLinking, CauseWrongEntity
		if len(r.QueryEntities) == 0 {
			m.Cause = CauseNothingLinked
		}
	case len(topics) > 0:
		m.Stage = StageChannel
		switch connection {
		case "2-hop":
			m.Cause = CauseTwoHops
		case "not_connected":
			m.Cause = CauseNotConnected
		default:
			m.Cause = CauseRelation
		}
	default:
		m.Stage, m.Cause = StageRecall, CauseNoCandidate
	}
	return m, true
}

// hitAt says whether any gold id is among the first k of ranked.
func hitAt(ranked, gold []string, k int) bool {
	if k > len(ranked) {
		k = len(ranked)
	}
	return holds(ranked[:k], gold)
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
		q := questions[r.ID]
		if m, missed := ClassifyMiss(r, k, q.Topics, q.Strata["connection"]); missed {
			t.Misses++
			if t.Counts[m.Stage] == nil {
				t.Counts[m.Stage] = map[string]int{}
			}
			t.Counts[m.Stage][m.Cause]++
			misses = append(misses, m)
		}
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
	systems := make([]string, 0, len(s.Misses))
	for name := range s.Misses {
		systems = append(systems, name)
	}
	sort.Strings(systems)
	fmt.Fprintf(w, "\n## Misses: where the gold was lost\n\n")
	fmt.Fprintf(w, "The first stage that lost every gold document of a question outside the top k "+
		"(misses.json lists each question).\n\n| system | stage | cause | misses | share |\n|---|---|---|---|---|\n")
	for _, name := range systems {
		t := s.Misses[name]
		fmt.Fprintf(w, "| %s | all | no gold in the top %d | %d of %d | |\n", name, t.K, t.Misses, t.Questions)
		for _, stage := range []string{StageLinking, StageRecall, StageChannel, StageFusion} {
			causes := make([]string, 0, len(t.Counts[stage]))
			for c := range t.Counts[stage] {
				causes = append(causes, c)
			}
			sort.Strings(causes)
			for _, c := range causes {
				n := t.Counts[stage][c]
				fmt.Fprintf(w, "| %s | %s | %s | %d | %.0f%% |\n", name, stage, c, n, 100*float64(n)/float64(max(t.Misses, 1)))
			}
		}
	}
}
