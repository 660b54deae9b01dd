package eval

import (
	"fmt"
	"io"
	"strings"
)

// LinkingScores measure a system's entity linking of the questions against
// the benchmark's gold topic entities (kgqa topic_qids). Each question's
// linked QIDs and gold topics are sets; precision, recall and F1 are micro
// averages over all questions' QIDs, and AnyGold is the share of questions
// with at least one gold topic linked.
type LinkingScores struct {
	Questions int     `json:"questions"` // questions with gold topics
	Linked    int     `json:"linked"`    // linked QIDs, all questions
	Gold      int     `json:"gold"`      // gold topic QIDs, all questions
	Correct   int     `json:"correct"`   // linked QIDs among the gold
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
	AnyGold   float64 `json:"any_gold"` // share of questions with a gold topic linked
	NoLink    int     `json:"no_link"`  // questions with no entity linked
}

// ScoreLinking scores linked against gold, question by question (the two
// slices are parallel; a question without gold topics is skipped).
func ScoreLinking(linked, gold [][]string) LinkingScores {
	var s LinkingScores
	anyGold := 0
	for i := range gold {
		if len(gold[i]) == 0 {
			continue
		}
		s.Questions++
		g := map[string]bool{}
		for _, q := range gold[i] {
			g[q] = true
		}
		s.Gold += len(g)
		seen := map[string]bool{}
		hit := false
		for _, q := range linked[i] {
			if seen[q] {
				continue
			}
			seen[q] = true
			s.Linked++
			if g[q] {
				s.Correct++
				hit = true
			}
		}
		if len(seen) == 0 {
			s.NoLink++
		}
		if hit {
			anyGold++
		}
	}
	if s.Linked > 0 {
		s.Precision = float64(s.Correct) / float64(s.Linked)
	}
	if s.Gold > 0 {
		s.Recall = float64(s.Correct) / float64(s.Gold)
	}
	if s.Precision+s.Recall > 0 {
		s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
	}
	if s.Questions > 0 {
		s.AnyGold = float64(anyGold) / float64(s.Questions)
	}
	return s
}

// recordQIDs are the QIDs of a record's query entities ("QID \"surface\"").
func recordQIDs(r Record) []string {
	out := make([]string, 0, len(r.QueryEntities))
	for _, e := range r.QueryEntities {
		q, _, _ := strings.Cut(e, " ")
		out = append(out, q)
	}
	return out
}

// summarizeLinking scores the linking of every DMAR system that links (not
// those with the structural path off) on a dataset with gold topics; nil
// when the dataset has none.
func summarizeLinking(ds *Dataset, systems []System, recs []Record) map[string]LinkingScores {
	topics := map[string][]string{}
	for _, q := range ds.Questions {
		if len(q.Topics) > 0 {
			topics[q.ID] = q.Topics
		}
	}
	if len(topics) == 0 {
		return nil
	}
	out := map[string]LinkingScores{}
	for _, sys := range systems {
		if sys.Kind != "dmar" || sys.Options == nil {
			continue
		}
		var linked, gold [][]string
		for _, r := range recs {
			if r.System != sys.Name || r.Error != "" {
				continue
			}
			if t, ok := topics[r.ID]; ok {
				linked, gold = append(linked, recordQIDs(r)), append(gold, t)
			}
		}
		if len(gold) > 0 {
			out[sys.Name] = ScoreLinking(linked, gold)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// writeLinking writes the report's linking section.
func writeLinking(w io.Writer, s *Summary) {
	if len(s.Linking) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Entity linking against the gold topic entities (micro over QIDs)\n\n| system | linking | questions | precision | recall | F1 | any gold linked | no entity |\n|---|---|---|---|---|---|---|---|\n")
	for _, sys := range s.Systems {
		l, ok := s.Linking[sys.Name]
		if !ok {
			continue
		}
		mode := "exact"
		if sys.Options != nil && sys.Options.Linking != "" {
			mode = sys.Options.Linking
		}
		fmt.Fprintf(w, "| %s | %s | %d | %.3f | %.3f | %.3f | %.3f | %d |\n", sys.Name, mode, l.Questions, l.Precision, l.Recall, l.F1, l.AnyGold, l.NoLink)
	}
}
