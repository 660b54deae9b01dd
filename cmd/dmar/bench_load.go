package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/dmar-kg/dmar/internal/api"
	"github.com/dmar-kg/dmar/internal/stats"
)

func init() {
	register("bench load", "closed-loop load test of a running dmar serve: throughput, p50/p95/p99, errors and RSS by concurrency (CSV and a plot with --out)", runBenchLoad)
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

// runBenchLoad: at each concurrency level, that many clients send retrieve
// requests back to back for a fixed time. It reports throughput, latency
// percentiles (stats.Percentile) and errors per level, samples the server's
// RSS over time and, with --out, writes CSV files, a PNG plot and the
// summary line.
//
//	dmar serve --addr 127.0.0.1:8080 &
//	dmar bench load --addr 127.0.0.1:8080 --pid $! --out /tmp/load
func runBenchLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "the server's HOST:PORT (loopback)")
	base := fs.String("url", "", "the server's base URL (overrides --addr)")
	pid := fs.Int("pid", 0, "the server's process id, for RSS samples (0: none)")
	levelsFlag := fs.String("levels", "1,2,4,8,16,32", "concurrency levels, in order")
	dur := fs.Duration("duration", 15*time.Second, "time per level")
	questions := fs.String("questions", "", "JSONL file with a question field per line (default: built-in questions)")
	extra := fs.String("options", `"k":5`, "extra JSON members of every request body (retrieve options)")
	out := fs.String("out", "", "folder for load.csv, rss.csv, load.png and summary.txt (empty: only print)")
	timeout := fs.Duration("timeout", 30*time.Second, "client time limit of one request")
	if err := fs.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("bench load: unexpected arguments %q", fs.Args())}
	}
	var levels []int
	for _, s := range strings.Split(*levelsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return usageError{fmt.Sprintf("--levels: %q is not a positive integer", s)}
		}
		levels = append(levels, n)
	}
	var tmpl api.RetrieveRequest
	if *extra != "" {
		dec := json.NewDecoder(strings.NewReader(`{` + *extra + `}`))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&tmpl); err != nil {
			return usageError{fmt.Sprintf("--options %s: %v", *extra, err)}
		}
	}
	qs, err := loadQuestions(*questions, stderr)
	if err != nil {
		return err
	}
	url := *base
	if url == "" {
		url = *addr
	}
	var opts []api.Option
	if k := loadAPIKey(); k != "" {
		opts = append(opts, api.WithAPIKey(k))
	}
	client, err := api.NewClient(url, &http.Client{Timeout: *timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0}}, opts...)
	if err != nil {
		return usageError{err.Error()}
	}
	if _, err := client.Ready(ctx); err != nil {
		return fmt.Errorf("%s is not ready: %w", client.Base(), err)
	}

	start := time.Now()
	var rss []rssSample
	var rssMu sync.Mutex
	var cur int
	if *pid > 0 {
		go func() {
			t := time.NewTicker(500 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				if b, err := readRSS(*pid); err == nil {
					rssMu.Lock()
					rss = append(rss, rssSample{At: time.Since(start), RSS: b, C: cur})
					rssMu.Unlock()
				}
			}
		}()
	}
	var results []loadLevel
	fmt.Fprintf(stdout, "%-6s %9s %7s %10s %9s %9s %9s %9s %9s\n", "conc", "requests", "errors", "req/s", "p50", "p95", "p99", "max", "rss")
	for _, c := range levels {
		rssMu.Lock()
		cur = c
		rssMu.Unlock()
		lv := runLoadLevel(ctx, client, tmpl, qs, c, *dur)
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
	if *out == "" {
		return nil
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	rssMu.Lock()
	defer rssMu.Unlock()
	if err := writeLoadCSV(*out, results, rss); err != nil {
		return err
	}
	if err := drawLoadPlot(filepath.Join(*out, "load.png"), results, rss); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return os.WriteFile(filepath.Join(*out, "summary.txt"), []byte(summary+"\n"), 0o644)
}

// loadAPIKey is the server's API key: DMAR_API_KEY, or DMARLOAD_API_KEY as
// cmd/dmarload read it.
func loadAPIKey() string {
	if k := os.Getenv("DMAR_API_KEY"); k != "" {
		return k
	}
	return os.Getenv("DMARLOAD_API_KEY")
}

// loadSummary is the last line printed: where p99 first crosses 1 s.
func loadSummary(results []loadLevel) string {
	for _, lv := range results {
		if lv.P99 > 1000 {
			return fmt.Sprintf("p99 crosses 1 s at concurrency %d", lv.Concurrency)
		}
	}
	return "p99 stays under 1 s at every level tried"
}

func fmtMS(v float64) string { return fmt.Sprintf("%.0fms", v) }

func durMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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
					lat = append(lat, durMS(el))
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

func loadQuestions(path string, stderr io.Writer) ([]string, error) {
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

// drawLoadPlot draws latency percentiles and throughput by concurrency, and
// RSS over time, one above the other, into a PNG.
func drawLoadPlot(path string, lv []loadLevel, rss []rssSample) error {
	lat := plot.New()
	lat.Title.Text = "dmar retrieve: latency by concurrency"
	lat.X.Label.Text = "concurrent clients"
	lat.Y.Label.Text = "ms"
	for i, s := range []struct {
		name string
		get  func(loadLevel) float64
	}{{"p50", func(l loadLevel) float64 { return l.P50 }}, {"p95", func(l loadLevel) float64 { return l.P95 }},
		{"p99", func(l loadLevel) float64 { return l.P99 }}} {
		pts := make(plotter.XYs, len(lv))
		for j, l := range lv {
			pts[j] = plotter.XY{X: float64(l.Concurrency), Y: s.get(l)}
		}
		if err := addLoadLine(lat, s.name, pts, i); err != nil {
			return err
		}
	}
	thr := plot.New()
	thr.Title.Text = "throughput"
	thr.X.Label.Text = "concurrent clients"
	thr.Y.Label.Text = "requests/s"
	pts := make(plotter.XYs, len(lv))
	for i, l := range lv {
		pts[i] = plotter.XY{X: float64(l.Concurrency), Y: l.Throughput}
	}
	if err := addLoadLine(thr, "req/s", pts, 0); err != nil {
		return err
	}
	mem := plot.New()
	mem.Title.Text = "server RSS over time"
	mem.X.Label.Text = "s"
	mem.Y.Label.Text = "MiB"
	mp := make(plotter.XYs, len(rss))
	for i, s := range rss {
		mp[i] = plotter.XY{X: s.At.Seconds(), Y: float64(s.RSS) / (1 << 20)}
	}
	if len(mp) > 0 {
		if err := addLoadLine(mem, "RSS", mp, 0); err != nil {
			return err
		}
	}
	img := vgimg.New(8*vg.Inch, 12*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 3, Cols: 1, PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(8), PadY: vg.Points(12)}
	plots := [][]*plot.Plot{{lat}, {thr}, {mem}}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

var loadPalette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{214, 39, 40, 255}, color.RGBA{44, 160, 44, 255},
}

// addLoadLine adds the i-th line of a plot (i picks the colour).
func addLoadLine(p *plot.Plot, name string, pts plotter.XYs, i int) error {
	l, s, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	l.Color = loadPalette[i%len(loadPalette)]
	s.Color = l.Color
	p.Add(l, s)
	p.Legend.Add(name, l)
	return nil
}
