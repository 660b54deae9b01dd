// Package bench measures DMAR's latency (dmar bench latency): p50 and p95
// of DMAR, exact and Monte Carlo, and of the question-aware DMAR, beside
// plain hybrid search; and a running server under load (dmar bench load,
// Load).
package bench

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dmar-kg/dmar/internal/pipeline"
	"github.com/dmar-kg/dmar/internal/retrieval"
	"github.com/dmar-kg/dmar/internal/stats"
)

// ReadQuestions reads the "question" field of a JSONL file (kgqa format).
func ReadQuestions(path string, limit int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("questions: %w", err)
	}
	defer f.Close()
	var qs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var q struct {
			Question string `json:"question"`
		}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil || q.Question == "" {
			return nil, fmt.Errorf("%s:%d: want a JSON object with a question", path, n)
		}
		qs = append(qs, q.Question)
		if limit > 0 && len(qs) == limit {
			break
		}
	}
	return qs, sc.Err()
}

// Latency is one latency benchmark: every question asked of every backend
// in turn, cold cache first, then warm, so that a remote deployment and the
// embedded one are timed in the same run on the same machine state.
type Latency struct {
	// Backends are timed side by side; the first is the reference the
	// others' ratios divide by (the embedded backends).
	Backends      []LatencyBackend
	Questions     []string
	QuestionsPath string // named in the report
	// Cold times a pass before any warm-up; Warm a pass after each
	// backend's WarmRoots are cached. At least one is set.
	Cold, Warm bool
}

// LatencyBackend is one deployment of the pipeline to time.
type LatencyBackend struct {
	Name     string // a short name for the report's columns
	Detail   string // the graph and the index, named once in the report
	Pipeline *pipeline.Pipeline
	// WarmRoots gives the entities whose subgraphs and GNN embeddings the
	// warm pass caches first (steady state, as a long-running server's
	// cache would hold them).
	WarmRoots func() []string
}

// BackendName names a graph and index setting in reports ("" for each:
// the embedded ones).
func BackendName(graph, index string) string {
	if graph == "" && index == "" {
		return "the embedded graph and index"
	}
	return cmp.Or(graph, "embedded graph") + " + " + cmp.Or(index, "embedded index")
}

// latencySeries is one system's timings on one backend: the request's
// total, its structural and Shapley parts, and (for the default request)
// every stage's time.
type latencySeries struct {
	name                       string
	o                          pipeline.Options
	total, structural, shapley []float64
	stages                     map[string][]float64
}

// backendRun is one backend's series in one pass, hybrid search first.
type backendRun struct {
	b      LatencyBackend
	hybrid *latencySeries
	dmar   []*latencySeries
}

// defaultRow is the index of the default request among latencySystems'.
const defaultRow = 3

// Run times every question and writes the tables to stdout, progress to
// stderr. With two backends or more it ends with the line
// "dmar bench latency ... remote_ratio=R": the default request's p50 on the
// second backend over the first's, in the last pass.
func (c Latency) Run(ctx context.Context, stdout, stderr io.Writer) error {
	if len(c.Backends) == 0 || len(c.Questions) == 0 || !c.Cold && !c.Warm {
		return fmt.Errorf("bench latency: want a backend, a question and a pass (cold or warm)")
	}
	opts := pipeline.Defaults()
	opts.N, opts.M, opts.P, opts.K = 100, 3, 20, 5
	// One untimed request of each kind per backend, so that lazy index
	// building, first model runs and statement planning are not timed.
	for _, b := range c.Backends {
		for _, o := range []pipeline.Options{opts, QuestionAware(opts), b.Pipeline.Defaults()} {
			if _, err := b.Pipeline.Retrieve(ctx, c.Questions[0], o); err != nil {
				return fmt.Errorf("bench latency: %s: %w", b.Name, err)
			}
		}
	}
	var last []*backendRun
	for _, warm := range []bool{false, true} {
		if warm && !c.Warm || !warm && !c.Cold {
			continue
		}
		pass := "cold cache: subgraphs are extracted and encoded as the questions need them"
		if warm {
			var err error
			if pass, err = c.warm(ctx); err != nil {
				return err
			}
		}
		runs, err := c.pass(ctx, opts, stderr)
		if err != nil {
			return err
		}
		c.report(stdout, pass, opts, runs)
		last = runs
	}
	if len(last) > 1 {
		ref, remote := last[0].dmar[defaultRow], last[1].dmar[defaultRow]
		which := map[bool]string{true: "warm", false: "cold"}[c.Warm]
		fmt.Fprintf(stdout, "\ndmar bench latency (%s, default request p50 over %d questions): %s %.1f ms, %s %.1f ms (%s) remote_ratio=%.2f\n",
			which, len(c.Questions), last[0].b.Name, pct(ref.total, 50), last[1].b.Name, pct(remote.total, 50), last[1].b.Detail, pct(remote.total, 50)/pct(ref.total, 50))
	}
	return nil
}

// warm caches every backend's WarmRoots and names the pass.
func (c Latency) warm(ctx context.Context) (string, error) {
	var parts []string
	for _, b := range c.Backends {
		if b.WarmRoots == nil {
			parts = append(parts, b.Name+": no warm-up")
			continue
		}
		t := time.Now()
		n, err := b.Pipeline.Warm(ctx, b.WarmRoots(), b.Pipeline.Defaults())
		if err != nil {
			return "", fmt.Errorf("bench latency: warm %s: %w", b.Name, err)
		}
		parts = append(parts, fmt.Sprintf("%s: %d subgraphs extracted and encoded in %s", b.Name, n, time.Since(t).Round(time.Millisecond)))
	}
	return "warm cache: " + strings.Join(parts, "; "), nil
}

// pass times every question on every backend. The backends take turns in
// a rotating order, so that a busy machine slows them alike.
func (c Latency) pass(ctx context.Context, opts pipeline.Options, stderr io.Writer) ([]*backendRun, error) {
	runs := make([]*backendRun, len(c.Backends))
	for i, b := range c.Backends {
		runs[i] = &backendRun{b: b, hybrid: &latencySeries{name: "hybrid search (encode + hybrid, k=5)"}, dmar: latencySystems(opts, b.Pipeline.Defaults())}
	}
	for i, q := range c.Questions {
		for k := range runs {
			if err := runs[(i+k)%len(runs)].question(ctx, q, opts); err != nil {
				return nil, fmt.Errorf("question %d: %w", i+1, err)
			}
		}
		if (i+1)%25 == 0 {
			fmt.Fprintf(stderr, "bench: %d/%d questions\n", i+1, len(c.Questions))
		}
	}
	return runs, nil
}

// question times plain hybrid search and every system on q.
func (br *backendRun) question(ctx context.Context, q string, opts pipeline.Options) error {
	p := br.b.Pipeline
	t := time.Now()
	v, err := p.Encoder().Encode(ctx, []string{q})
	if err != nil {
		return err
	}
	if _, err := p.Index().Search(ctx, retrieval.Query{Mode: retrieval.Hybrid, Text: q, Vector: v[0], Alpha: opts.Stage2Alpha, Fusion: opts.Fusion, Limit: 5}); err != nil {
		return err
	}
	br.hybrid.total = append(br.hybrid.total, ms(time.Since(t)))
	for _, s := range br.dmar {
		res, err := p.Retrieve(ctx, q, s.o)
		if err != nil {
			return fmt.Errorf("%s: %w", br.b.Name, err)
		}
		s.total = append(s.total, res.TimingsMS["total"])
		s.structural = append(s.structural, res.TimingsMS["structural"])
		s.shapley = append(s.shapley, res.TimingsMS["shapley"])
		if s.stages != nil {
			for k, v := range res.TimingsMS {
				s.stages[k] = append(s.stages[k], v)
			}
		}
	}
	return nil
}

// latencySystems are the DMAR systems timed, in report order: the paper's
// (exact, Monte Carlo), the question-aware one, the default request (def,
// what dmar serve runs for a request that names no option; its stages are
// kept) and, each without one of its parts, what that part costs or saves.
func latencySystems(opts, def pipeline.Options) []*latencySeries {
	mc := opts
	mc.Shapley, mc.Samples = "montecarlo", 50
	qa := QuestionAware(opts)
	qaQ2 := qa
	qaQ2.Stage2Vector = "reformulated" // what searching stage 2 with enc(Q) saves
	qaPlainRel := qa
	qaPlainRel.GraphRelationQuery = "" // what the masked relation query's second encoding costs
	return []*latencySeries{
		{name: "DMAR exact (n=100 m=3 p=20 k=5)", o: opts},
		{name: "DMAR Monte Carlo T=50", o: mc},
		{name: "DMAR question-aware (the same, every new part on)", o: qa},
		defaultRow: {name: "default request (method " + def.Method + ")", o: def, stages: map[string][]float64{}},
		{name: "DMAR question-aware, stage 2 searched with enc(Q')", o: qaQ2},
		{name: "DMAR question-aware, relations matched to enc(Q), not masked", o: qaPlainRel},
	}
}

// report writes one pass: the systems on each backend, the ratios the
// targets are stated in, and the default request's stages.
func (c Latency) report(stdout io.Writer, pass string, opts pipeline.Options, runs []*backendRun) {
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.b.Name + ": " + r.b.Detail
	}
	fmt.Fprintf(stdout, "\nDMAR latency over %d questions of %s (%s)\n%s\n\n", len(c.Questions), c.QuestionsPath, strings.Join(names, "; "), pass)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	head := "system"
	for i, r := range runs {
		head += "\t" + r.b.Name + " p50 ms\tp95 ms"
		if i > 0 {
			head += "\tp50 ratio"
		}
	}
	fmt.Fprintln(tw, head+"\tstructural p50 ms\tstructural p95 ms\tShapley p50 ms\tShapley p95 ms")
	ref := runs[0]
	for row := -1; row < len(ref.dmar); row++ {
		line := ""
		for i, r := range runs {
			s := r.hybrid
			if row >= 0 {
				s = r.dmar[row]
			}
			if i == 0 {
				line = s.name
			}
			line += fmt.Sprintf("\t%.1f\t%.1f", pct(s.total, 50), pct(s.total, 95))
			if i > 0 {
				base := ref.hybrid
				if row >= 0 {
					base = ref.dmar[row]
				}
				line += fmt.Sprintf("\t%.2fx", pct(s.total, 50)/pct(base.total, 50))
			}
		}
		st := "-\t-\t-\t-"
		if row >= 0 {
			s := ref.dmar[row]
			st = fmt.Sprintf("%.2f\t%.2f\t%.3f\t%.3f", pct(s.structural, 50), pct(s.structural, 95), pct(s.shapley, 50), pct(s.shapley, 95))
		}
		fmt.Fprintln(tw, line+"\t"+st)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "(structural and Shapley columns: %s)\n", ref.b.Name)
	fmt.Fprintf(stdout, "\nquestion-aware: %s\n", QuestionAwareParts(opts))
	for _, r := range runs {
		exact, monte := r.dmar[0], r.dmar[1]
		fmt.Fprintf(stdout, "\n%s:\n", r.b.Name)
		fmt.Fprintf(stdout, "default p50 / hybrid p50 = %.2fx\n", pct(r.dmar[defaultRow].total, 50)/pct(r.hybrid.total, 50))
		fmt.Fprintf(stdout, "DMAR exact p50 / hybrid p50 = %.2fx\n", pct(exact.total, 50)/pct(r.hybrid.total, 50))
		if e := pct(exact.structural, 50); e > 0 {
			fmt.Fprintf(stdout, "structural stage p50 (subgraph games + Shapley), Monte Carlo T=50 / exact = %.1fx\n", pct(monte.structural, 50)/e)
		}
		if e := pct(exact.shapley, 50); e > 0 {
			fmt.Fprintf(stdout, "Shapley computation p50, Monte Carlo T=50 / exact = %.1fx\n", pct(monte.shapley, 50)/e)
		}
	}
	c.reportStages(stdout, runs)
}

// reportStages writes the default request's stage times on each backend,
// the profile that says where a remote backend's time goes.
func (c Latency) reportStages(stdout io.Writer, runs []*backendRun) {
	seen := map[string]bool{}
	var stages []string
	for _, r := range runs {
		for k := range r.dmar[defaultRow].stages {
			if !seen[k] {
				seen[k] = true
				stages = append(stages, k)
			}
		}
	}
	slices.Sort(stages)
	fmt.Fprintf(stdout, "\nstages of the default request (p50 ms over the questions that ran the stage; n: how many)\n")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	head := "stage"
	for _, r := range runs {
		head += "\t" + r.b.Name + "\tn"
	}
	fmt.Fprintln(tw, head)
	for _, k := range stages {
		line := k
		for _, r := range runs {
			xs := r.dmar[defaultRow].stages[k]
			line += fmt.Sprintf("\t%.2f\t%d", pct(xs, 50), len(xs))
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}

// QuestionAwareParts names what QuestionAware(o) runs with, for the report.
func QuestionAwareParts(o pipeline.Options) string {
	q := QuestionAware(o)
	return fmt.Sprintf("%s linking, %s stage 1, graph recall %d hop(s), graph_roots %d, graph_boost %g, graph_popularity %g, graph_relation_query %s, structure_needs_channel %t, stage2_vector %s",
		q.Linking, q.Stage1, q.GraphRecall, q.GraphRoots, q.GraphBoost, q.GraphPopularity, cmp.Or(q.GraphRelationQuery, "question"), q.StructureNeedsChannel, q.Stage2Vector)
}

// QuestionAware is o with every part of the question-aware method on: dmar
// eval's dmar system (pipeline.Options.QuestionAware).
func QuestionAware(o pipeline.Options) pipeline.Options { return o.QuestionAware() }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// pct is the p-th percentile of xs, with the one definition eval and the load
// test use (stats.Percentile); 0 when there are no values.
func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return stats.Percentile(xs, p)
}
