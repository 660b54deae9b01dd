package eval

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dmar-kg/dmar/internal/stats"
)

// Summary is everything a run measured (results.json).
type Summary struct {
	Dataset      DatasetInfo                   `json:"dataset"`
	KMax         int                           `json:"k_max"`
	Systems      []System                      `json:"systems"`
	Models       []string                      `json:"models"` // which GNN, gate, encoder, reader were in use
	Metrics      []string                      `json:"metrics"`
	BestBaseline map[string]string             `json:"best_baseline"` // metric -> system
	Means        map[string]map[string]float64 `json:"means"`         // system -> metric -> mean
	Counts       map[string]map[string]int     `json:"counts"`        // questions a mean is over
	Diffs        map[string]map[string]CI      `json:"diffs_vs_best_baseline"`
	// DiffsFrom is each ablation against the system it starts from
	// (System.From), paired, where both ran: system -> metric -> CI.
	DiffsFrom     map[string]map[string]CI      `json:"diffs_vs_from,omitempty"`
	Bootstrap     BootstrapInfo                 `json:"bootstrap"`
	Strata        map[string]map[string]Stratum `json:"strata"` // key -> value -> results
	Latency       map[string]Latency            `json:"latency_ms"`
	Stages        map[string]map[string]Latency `json:"stage_latency_ms"` // DMAR system -> stage
	Fallbacks     map[string]map[string]int     `json:"fallbacks"`        // system -> name -> questions
	Errors        map[string]int                `json:"errors"`
	RecallCurve   map[string][]float64          `json:"recall_curve"` // system -> mean recall@k, k = 1..k_max
	Reformulators map[string]map[string]int     `json:"reformulators,omitempty"`
	Generator     string                        `json:"generator,omitempty"`
	// Linking scores each linking DMAR system's query entities against the
	// gold topic entities (kgqa); absent for datasets without them.
	Linking map[string]LinkingScores `json:"linking,omitempty"`
	// EntSpread is, per DMAR system and stage (first, second), how much the
	// structural score tells the candidates apart (entspread.go).
	EntSpread map[string]map[string]EntSpread `json:"ent_spread,omitempty"`
	// ReaderCost is each system's reader cost per question (with a reader).
	ReaderCost map[string]ReaderCostSummary `json:"reader_cost,omitempty"`
	// Misses counts, per system, where the questions outside the top k lost
	// their gold (DMAR's systems, which report their stages' candidates).
	Misses map[string]MissTable `json:"misses,omitempty"`
	Extra  map[string]any       `json:"extra,omitempty"`
	// missList is each miss, for misses.json.
	missList []Miss
}

// DatasetInfo describes the evaluated data.
type DatasetInfo struct {
	Format     string   `json:"format"`
	Path       string   `json:"path"`
	Setting    string   `json:"setting"`
	Questions  int      `json:"questions"`
	CorpusDocs int      `json:"corpus_docs"`
	Corpus     string   `json:"corpus"`
	Graph      string   `json:"graph"`
	Index      string   `json:"index"`
	Notes      []string `json:"notes"`
	// MissingGold counts gold ids that the index does not hold.
	MissingGold int `json:"missing_gold"`
	// MultiGold counts questions with more than one gold document.
	MultiGold int `json:"multi_gold"`
}

// BootstrapInfo records how the intervals were computed.
type BootstrapInfo struct {
	Resamples  int    `json:"resamples"`
	Seed       uint64 `json:"seed"`
	Confidence string `json:"confidence"`
}

// Stratum holds the means of one subset of the questions.
type Stratum struct {
	N     int                           `json:"n"`
	Means map[string]map[string]float64 `json:"means"`
}

// Latency summarises a distribution of milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	Mean float64 `json:"mean"`
	N    int     `json:"n"`
}

func latencyOf(xs []float64) Latency {
	return Latency{P50: stats.Percentile(xs, 50), P95: stats.Percentile(xs, 95), Mean: stats.Mean(xs), N: len(xs)}
}

// metricOrder sorts metric names for tables: the families in a fixed order,
// cut-offs ascending.
func metricOrder(names map[string]bool) []string {
	fam := []string{"recall", "hit", "mrr", "ndcg", "all_support", "answer_recall", "em", "f1", "label_acc", "fever_score", "fever_score_cited"}
	rank := func(m string) (int, int) {
		f, k, _ := strings.Cut(m, "@")
		kn, _ := strconv.Atoi(k)
		for i, x := range fam {
			if x == f {
				return i, kn
			}
		}
		return len(fam), kn
	}
	var out []string
	for n := range names {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		fi, ki := rank(out[i])
		fj, kj := rank(out[j])
		if fi != fj {
			return fi < fj
		}
		if ki != kj {
			return ki < kj
		}
		return out[i] < out[j]
	})
	return out
}

// Summarize aggregates records into a Summary. Every system's metric vector
// is over the same questions (in dataset order), so differences are paired.
func Summarize(ds *Dataset, systems []System, recs []Record, kmax, resamples int, seed uint64) *Summary {
	s := &Summary{
		Dataset: DatasetInfo{Format: ds.Format, Path: ds.Path, Setting: ds.Setting, Questions: len(ds.Questions), CorpusDocs: len(ds.Corpus), Notes: ds.Notes},
		KMax:    kmax, Systems: systems,
		BestBaseline: map[string]string{}, Means: map[string]map[string]float64{}, Counts: map[string]map[string]int{},
		Diffs: map[string]map[string]CI{}, Strata: map[string]map[string]Stratum{}, Latency: map[string]Latency{},
		Stages: map[string]map[string]Latency{}, Fallbacks: map[string]map[string]int{}, Errors: map[string]int{},
		RecallCurve: map[string][]float64{}, Reformulators: map[string]map[string]int{},
		Bootstrap: BootstrapInfo{Resamples: resamples, Seed: seed, Confidence: "95% percentile interval, paired over questions"},
	}
	for _, q := range ds.Questions {
		if len(q.Gold) > 1 {
			s.Dataset.MultiGold++
		}
	}
	bySys := map[string][]Record{}
	names := map[string]bool{}
	for _, r := range recs {
		bySys[r.System] = append(bySys[r.System], r)
		for m := range r.Metrics {
			names[m] = true
		}
	}
	s.Metrics = metricOrder(names)
	vec := map[string]map[string][]float64{}
	for _, sys := range systems {
		vec[sys.Name] = s.addMeans(ds, sys.Name, bySys[sys.Name])
		s.addRuns(sys.Name, bySys[sys.Name], kmax)
	}
	s.Linking = summarizeLinking(ds, systems, recs)
	s.EntSpread = summarizeEntSpread(systems, recs)
	s.ReaderCost = summarizeReaderCost(systems, recs)
	s.addMisses(ds, recs)
	s.compareToBest(systems, vec, resamples, seed)
	s.compareToFrom(systems, vec, resamples, seed)
	s.addStrata(ds, systems, vec)
	return s
}

// addMeans sets system's mean and count of every metric, and returns its
// per-question values of each: in dataset order, NaN where absent.
func (s *Summary) addMeans(ds *Dataset, system string, rs []Record) map[string][]float64 {
	qIndex := make(map[string]int, len(ds.Questions))
	for i, q := range ds.Questions {
		qIndex[q.ID] = i
	}
	vec := map[string][]float64{}
	for _, m := range s.Metrics {
		v := make([]float64, len(ds.Questions))
		for i := range v {
			v[i] = math.NaN()
		}
		for _, r := range rs {
			if x, ok := r.Metrics[m]; ok {
				v[qIndex[r.ID]] = x
			}
		}
		vec[m] = v
	}
	s.Means[system], s.Counts[system] = map[string]float64{}, map[string]int{}
	for _, m := range s.Metrics {
		if mean, n := nanMean(vec[m], nil); n > 0 {
			s.Means[system][m], s.Counts[system][m] = mean, n
		}
	}
	return vec
}

// addRuns sets system's latency, stage latencies, fallbacks, errors,
// reformulators and recall curve.
func (s *Summary) addRuns(system string, rs []Record, kmax int) {
	var lat []float64
	stages := map[string][]float64{}
	fb := map[string]int{}
	curve := make([]float64, kmax)
	nGold := 0
	for _, r := range rs {
		if r.Error != "" {
			s.Errors[system]++
		}
		lat = append(lat, r.LatencyMS)
		for st, ms := range r.TimingsMS {
			stages[st] = append(stages[st], ms)
		}
		seen := map[string]bool{}
		for _, f := range r.Fallbacks {
			if !seen[f] {
				seen[f] = true
				fb[f]++
			}
		}
		if r.Reformulator != "" {
			if s.Reformulators[system] == nil {
				s.Reformulators[system] = map[string]int{}
			}
			s.Reformulators[system][r.Reformulator]++
		}
		if len(r.Gold) > 0 {
			nGold++
			for k := 1; k <= kmax; k++ {
				curve[k-1] += RecallAt(r.RankedIDs, r.Gold, k)
			}
		}
	}
	if len(lat) > 0 {
		s.Latency[system] = latencyOf(lat)
	}
	if len(stages) > 0 {
		s.Stages[system] = map[string]Latency{}
		for st, xs := range stages {
			s.Stages[system][st] = latencyOf(xs)
		}
	}
	s.Fallbacks[system] = fb
	if nGold > 0 {
		for k := range curve {
			curve[k] /= float64(nGold)
		}
		s.RecallCurve[system] = curve
	}
}

// compareToBest finds the best baseline per metric and sets every other
// system's paired bootstrap difference against it.
func (s *Summary) compareToBest(systems []System, vec map[string]map[string][]float64, resamples int, seed uint64) {
	for _, m := range s.Metrics {
		best, bestV := "", math.Inf(-1)
		for _, sys := range systems {
			if !sys.Baseline() {
				continue
			}
			if v, ok := s.Means[sys.Name][m]; ok && v > bestV {
				best, bestV = sys.Name, v
			}
		}
		if best == "" {
			continue
		}
		s.BestBaseline[m] = best
		for i, sys := range systems {
			if sys.Name == best {
				continue
			}
			if s.Diffs[sys.Name] == nil {
				s.Diffs[sys.Name] = map[string]CI{}
			}
			ci := PairedBootstrap(vec[sys.Name][m], vec[best][m], resamples, seed+uint64(i))
			if !math.IsNaN(ci.Diff) {
				s.Diffs[sys.Name][m] = ci
			}
		}
	}
}

// compareToFrom compares each ablation with the system it starts from,
// when the run has both.
func (s *Summary) compareToFrom(systems []System, vec map[string]map[string][]float64, resamples int, seed uint64) {
	for i, sys := range systems {
		if sys.From == "" || vec[sys.From] == nil {
			continue
		}
		for _, m := range s.Metrics {
			ci := PairedBootstrap(vec[sys.Name][m], vec[sys.From][m], resamples, seed+uint64(i))
			if math.IsNaN(ci.Diff) {
				continue
			}
			if s.DiffsFrom == nil {
				s.DiffsFrom = map[string]map[string]CI{}
			}
			if s.DiffsFrom[sys.Name] == nil {
				s.DiffsFrom[sys.Name] = map[string]CI{}
			}
			s.DiffsFrom[sys.Name][m] = ci
		}
	}
}

// addStrata sets the means of every system over each stratum's questions.
func (s *Summary) addStrata(ds *Dataset, systems []System, vec map[string]map[string][]float64) {
	keys := map[string]map[string][]bool{}
	for i, q := range ds.Questions {
		for k, v := range q.Strata {
			if keys[k] == nil {
				keys[k] = map[string][]bool{}
			}
			if keys[k][v] == nil {
				keys[k][v] = make([]bool, len(ds.Questions))
			}
			keys[k][v][i] = true
		}
	}
	for k, vals := range keys {
		s.Strata[k] = map[string]Stratum{}
		for v, in := range vals {
			st := Stratum{Means: map[string]map[string]float64{}}
			for _, b := range in {
				if b {
					st.N++
				}
			}
			for _, sys := range systems {
				st.Means[sys.Name] = map[string]float64{}
				for _, m := range s.Metrics {
					if mean, n := nanMean(vec[sys.Name][m], in); n > 0 {
						st.Means[sys.Name][m] = mean
					}
				}
			}
			s.Strata[k][v] = st
		}
	}
}

// nanMean is the mean of the non-NaN values (where mask is nil or true).
func nanMean(xs []float64, mask []bool) (float64, int) {
	t, n := 0.0, 0
	for i, x := range xs {
		if math.IsNaN(x) || (i < len(mask) && !mask[i]) {
			continue
		}
		t += x
		n++
	}
	if n == 0 {
		return math.NaN(), 0
	}
	return t / float64(n), n
}

// addMisses classifies, at k = 5 (Recall@5's misses), the questions of every
// record that carries its stages' candidates (DMAR's systems).
func (s *Summary) addMisses(ds *Dataset, recs []Record) {
	questions := make(map[string]Question, len(ds.Questions))
	for _, q := range ds.Questions {
		questions[q.ID] = q
	}
	tables, list := summarizeMisses(recs, questions, 5)
	if len(tables) > 0 {
		s.Misses, s.missList = tables, list
	}
}
