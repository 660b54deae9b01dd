package eval

import (
	"fmt"
	"io"
	"time"
)

// ReaderCost is what the reader cost on one question: its wall time (cache
// hits cost next to nothing), the calls it made to the endpoint and the
// replies it took from the cache.
type ReaderCost struct {
	MS        float64 `json:"ms"`
	Calls     int64   `json:"calls"`
	CacheHits int64   `json:"cache_hits"`
}

// costSince is the cost of the reader between two of its Stats, the first
// taken at t (questions run one at a time, so the difference is one
// question's).
func costSince(before, after ReaderStats, t time.Time) *ReaderCost {
	return &ReaderCost{MS: msSince(t), Calls: after.Calls - before.Calls, CacheHits: after.CacheHits - before.CacheHits}
}

// ReaderCostSummary is a system's mean reader cost per question.
type ReaderCostSummary struct {
	MeanMS        float64 `json:"mean_ms"`
	CallMS        float64 `json:"call_ms"` // mean time of a question whose reply was not cached
	Calls         float64 `json:"calls_per_question"`
	CacheHits     float64 `json:"cache_hits_per_question"`
	Questions     int     `json:"questions"`
	CallQuestions int     `json:"questions_with_calls"`
}

// summarizeReaderCost averages each system's reader costs; nil without a reader.
func summarizeReaderCost(systems []System, recs []Record) map[string]ReaderCostSummary {
	out := map[string]ReaderCostSummary{}
	for _, sys := range systems {
		var s ReaderCostSummary
		var callMS float64
		for _, r := range recs {
			if r.System != sys.Name || r.ReaderCost == nil {
				continue
			}
			c := r.ReaderCost
			s.Questions++
			s.MeanMS += c.MS
			s.Calls += float64(c.Calls)
			s.CacheHits += float64(c.CacheHits)
			if c.Calls > 0 {
				s.CallQuestions++
				callMS += c.MS
			}
		}
		if s.Questions == 0 {
			continue
		}
		n := float64(s.Questions)
		s.MeanMS, s.Calls, s.CacheHits = s.MeanMS/n, s.Calls/n, s.CacheHits/n
		if s.CallQuestions > 0 {
			s.CallMS = callMS / float64(s.CallQuestions)
		}
		out[sys.Name] = s
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// writeReaderCost is the table of each system's reader cost per question.
func writeReaderCost(w io.Writer, s *Summary) {
	if len(s.ReaderCost) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Reader cost per question (%s)\n\n"+
		"Replies are cached by content in the state folder: systems that show the reader the same documents share a call.\n\n"+
		"| system | mean ms | ms when called | generator calls | cache hits | questions |\n|---|---|---|---|---|---|\n", s.Generator)
	for _, sys := range s.Systems {
		c, ok := s.ReaderCost[sys.Name]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "| %s | %.0f | %.0f | %.2f | %.2f | %d |\n", sys.Name, c.MeanMS, c.CallMS, c.Calls, c.CacheHits, c.Questions)
	}
}
