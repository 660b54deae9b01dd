package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/stats"
)

// Load is a closed-loop load test of a running dmar serve (dmar bench
// load): at each concurrency level, that many clients send retrieve
// requests back to back for a fixed time.
type Load struct {
	Client    *api.Client         // the server; see LoadClient
	Template  api.RetrieveRequest // every request's options; Query is set per request
	Questions []string            // asked in turn; see LoadQuestions
	Levels    []int               // concurrency levels, in order
	Duration  time.Duration       // time per level
	PID       int                 // the server's process id, for RSS samples (0: none)
	Out       string              // folder for load.csv, rss.csv, load.png and summary.txt ("": only print)
}

// loadLevel is one concurrency level's outcome; latencies in milliseconds.
type loadLevel struct {
	Concurrency int
	Requests    int
	Errors      int
	Throughput  float64 // successful requests per second
	P50, P95    float64
	P99, Max    float64
}

type rssSample struct {
	At  time.Duration
	RSS int64 // bytes
	C   int
}

// LoadClient is a client of the server at base (HOST:PORT or a URL) for a
// load test: timeout limits one request, and connections are kept for
// every concurrent client. apiKey, when set, is sent as a bearer token.
func LoadClient(base string, timeout time.Duration, apiKey string) (*api.Client, error) {
	var opts []api.Option
	if apiKey != "" {
		opts = append(opts, api.WithAPIKey(apiKey))
	}
	return api.NewClient(base, &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0}}, opts...)
}

// ParseLevels reads a comma-separated list of positive integers.
func ParseLevels(s string) ([]int, error) {
	var levels []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		levels = append(levels, n)
	}
	return levels, nil
}

// ParseRequestOptions reads extra JSON members of a retrieve request body
// (e.g. `"k":5`) into a request template; unknown members are an error.
func ParseRequestOptions(members string) (api.RetrieveRequest, error) {
	var tmpl api.RetrieveRequest
	if members == "" {
		return tmpl, nil
	}
	dec := json.NewDecoder(strings.NewReader(`{` + members + `}`))
	dec.DisallowUnknownFields()
	err := dec.Decode(&tmpl)
	return tmpl, err
}

// Run waits for the server to be ready, runs every level and writes a row
// per level and the summary line to stdout. It reports throughput, latency
// percentiles (stats.SortedPercentile) and errors per level, samples the
// server's RSS over time and, with Out, writes CSV files, a PNG plot and the
// summary line. A cancelled ctx ends the run after the current level.
func (l Load) Run(ctx context.Context, stdout io.Writer) error {
	if _, err := l.Client.Ready(ctx); err != nil {
		return fmt.Errorf("%s is not ready: %w", l.Client.Base(), err)
	}
	start := time.Now()
	var rss []rssSample
	var rssMu sync.Mutex
	var cur int
	if l.PID > 0 {
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		go func() {
			t := time.NewTicker(500 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-sctx.Done():
					return
				case <-t.C:
				}
				if b, err := readRSS(l.PID); err == nil {
					rssMu.Lock()
					rss = append(rss, rssSample{At: time.Since(start), RSS: b, C: cur})
					rssMu.Unlock()
				}
			}
		}()
	}
	var results []loadLevel
	fmt.Fprintf(stdout, "%-6s %9s %7s %10s %9s %9s %9s %9s %9s\n", "conc", "requests", "errors", "req/s", "p50", "p95", "p99", "max", "rss")
	for _, c := range l.Levels {
		rssMu.Lock()
		cur = c
		rssMu.Unlock()
		lv := runLoadLevel(ctx, l.Client, l.Template, l.Questions, c, l.Duration)
		results = append(results, lv)
		rssMu.Lock()
		last := int64(0)
		if len(rss) > 0 {
			last = rss[len(rss)-1].RSS
		}
		rssMu.Unlock()
		fmt.Fprintf(stdout, "%-6d %9d %7d %10.2f %9s %9s %9s %9s %8dM\n", c, lv.Requests, lv.Errors, lv.Throughput,
			fmtMS(lv.P50), fmtMS(lv.P95), fmtMS(lv.P99), fmtMS(lv.Max), last>>20)
		if ctx.Err() != nil {
			break
		}
	}
	summary := loadSummary(results)
	fmt.Fprintln(stdout, summary)
	if l.Out == "" {
		return nil
	}
	if err := os.MkdirAll(l.Out, 0o755); err != nil {
		return err
	}
	rssMu.Lock()
	defer rssMu.Unlock()
	if err := writeLoadCSV(l.Out, results, rss); err != nil {
		return err
	}
	if err := drawLoadPlot(filepath.Join(l.Out, "load.png"), results, rss); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return os.WriteFile(filepath.Join(l.Out, "summary.txt"), []byte(summary+"\n"), 0o644)
}

// loadSummary is what ends the output: where p99 first crosses 1 s, then
// one line of figures for scripts: the highest throughput of any level
// (saturated_rps) and the highest concurrency up to which every level kept
// p99 under 1 s (p99_under_1s_up_to; 0 when the first level did not, and a
// level with no successful request does not).
func loadSummary(results []loadLevel) string {
	human := "p99 stays under 1 s at every level tried"
	upTo, crossed, best := 0, false, 0.0
	for _, lv := range results {
		best = max(best, lv.Throughput)
		if crossed {
			continue
		}
		if lv.P99 > 1000 || lv.Requests == lv.Errors {
			human = fmt.Sprintf("p99 crosses 1 s at concurrency %d", lv.Concurrency)
			crossed = true
			continue
		}
		upTo = lv.Concurrency
	}
	return fmt.Sprintf("%s\nsaturated_rps=%.2f p99_under_1s_up_to=%d", human, best, upTo)
}

func fmtMS(v float64) string { return fmt.Sprintf("%.0fms", v) }

// runLoadLevel runs c clients for d and collects every latency.
func runLoadLevel(ctx context.Context, client *api.Client, tmpl api.RetrieveRequest, qs []string, c int, d time.Duration) loadLevel {
	lctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var lat []float64
	nerr := 0
	var wg sync.WaitGroup
	begin := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; lctx.Err() == nil; i += c {
				req := tmpl
				req.Query = qs[i%len(qs)]
				t := time.Now()
				err := client.Do(lctx, http.MethodPost, "/v1/retrieve", &req, nil) // the answer is read, not decoded
				el := time.Since(t)
				if lctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
					return // cut off by the end of the level, not an error
				}
				mu.Lock()
				if err != nil {
					nerr++
				} else {
					lat = append(lat, ms(el))
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	wall := time.Since(begin)
	lv := loadLevel{Concurrency: c, Requests: len(lat) + nerr, Errors: nerr, Throughput: float64(len(lat)) / wall.Seconds()}
	if len(lat) > 0 {
		sort.Float64s(lat)
		lv.P50, lv.P95, lv.P99 = stats.SortedPercentile(lat, 50), stats.SortedPercentile(lat, 95), stats.SortedPercentile(lat, 99)
		lv.Max = lat[len(lat)-1]
	}
	return lv
}

// readRSS reads VmRSS of pid from /proc.
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v)
			n, err := strconv.ParseInt(f[0], 10, 64)
			return n << 10, err
		}
	}
	return 0, errors.New("no VmRSS")
}

var builtinLoadQuestions = []string{
	"Who directed Inception?", "Which films did Christopher Nolan direct?", "Who starred in The Dark Knight?",
	"Which film won the Academy Award for Best Picture?", "Who composed the music of Interstellar?",
	"Which actors played in films directed by Steven Spielberg?", "What is the country of origin of Amélie?",
	"Who wrote the screenplay of Pulp Fiction?",
}

// LoadQuestions reads the question field of each line of a JSONL file; a
// line without one is skipped with a note to stderr. An empty path gives
// built-in questions.
func LoadQuestions(path string, stderr io.Writer) ([]string, error) {
	if path == "" {
		return builtinLoadQuestions, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var qs []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var o struct {
			Question string `json:"question"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &o); err != nil || o.Question == "" {
			fmt.Fprintf(stderr, "dmar bench load: %s:%d skipped (no question field)\n", path, n)
			continue
		}
		qs = append(qs, o.Question)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no questions", path)
	}
	return qs, sc.Err()
}

func writeLoadCSV(dir string, lv []loadLevel, rss []rssSample) error {
	var b strings.Builder
	b.WriteString("concurrency,requests,errors,throughput_rps,p50_ms,p95_ms,p99_ms,max_ms\n")
	for _, l := range lv {
		fmt.Fprintf(&b, "%d,%d,%d,%.3f,%.1f,%.1f,%.1f,%.1f\n", l.Concurrency, l.Requests, l.Errors, l.Throughput, l.P50, l.P95, l.P99, l.Max)
	}
	if err := os.WriteFile(filepath.Join(dir, "load.csv"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	b.Reset()
	b.WriteString("seconds,concurrency,rss_mib\n")
	for _, s := range rss {
		fmt.Fprintf(&b, "%.1f,%d,%.1f\n", s.At.Seconds(), s.C, float64(s.RSS)/(1<<20))
	}
	return os.WriteFile(filepath.Join(dir, "rss.csv"), []byte(b.String()), 0o644)
}
