// Command dmarload is a closed-loop load test for a running dmar serve on
// loopback: at each concurrency level, that many clients send retrieve
// requests back to back for a fixed time. It reports throughput, latency
// percentiles and errors per level, samples the server's RSS over time and
// writes CSV files and a PNG plot.
//
//	dmar serve --addr 127.0.0.1:8080 &
//	go run ./cmd/dmarload --url http://127.0.0.1:8080 --pid $! --out /tmp/load
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dmarload:", err)
		os.Exit(1)
	}
}

type level struct {
	Concurrency int
	Requests    int
	Errors      int
	Throughput  float64 // successful requests per second
	P50, P95    time.Duration
	P99, Max    time.Duration
}

type rssSample struct {
	At  time.Duration
	RSS int64 // bytes
	C   int
}

func run() error {
	url := flag.String("url", "http://127.0.0.1:8080", "dmar's base URL (loopback)")
	pid := flag.Int("pid", 0, "the server's process id, for RSS samples (0: none)")
	levelsFlag := flag.String("levels", "1,2,4,8,16,32", "concurrency levels, in order")
	dur := flag.Duration("duration", 15*time.Second, "time per level")
	questions := flag.String("questions", "", "JSONL file with a question field per line (default: built-in questions)")
	body := flag.String("options", `"k":5`, "extra JSON members of every request body")
	out := flag.String("out", "", "folder for load.csv, rss.csv, load.png and summary.txt (empty: only print)")
	timeout := flag.Duration("timeout", 30*time.Second, "client time limit of one request")
	flag.Parse()
	var levels []int
	for _, s := range strings.Split(*levelsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("--levels: %q is not a positive integer", s)
		}
		levels = append(levels, n)
	}
	qs, err := loadQuestions(*questions)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client := &http.Client{Timeout: *timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 0}}
	if err := get(ctx, client, *url+"/readyz"); err != nil {
		return fmt.Errorf("%s is not ready: %w", *url, err)
	}
	key := os.Getenv("DMARLOAD_API_KEY")

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
	var results []level
	fmt.Printf("%-6s %9s %7s %10s %9s %9s %9s %9s %9s\n", "conc", "requests", "errors", "req/s", "p50", "p95", "p99", "max", "rss")
	for _, c := range levels {
		rssMu.Lock()
		cur = c
		rssMu.Unlock()
		lv := runLevel(ctx, client, *url, key, qs, *body, c, *dur)
		results = append(results, lv)
		rssMu.Lock()
		last := int64(0)
		if len(rss) > 0 {
			last = rss[len(rss)-1].RSS
		}
		rssMu.Unlock()
		fmt.Printf("%-6d %9d %7d %10.2f %9s %9s %9s %9s %8dM\n", c, lv.Requests, lv.Errors, lv.Throughput,
			ms(lv.P50), ms(lv.P95), ms(lv.P99), ms(lv.Max), last>>20)
		if ctx.Err() != nil {
			break
		}
	}
	cross := 0
	for _, lv := range results {
		if lv.P99 > time.Second {
			cross = lv.Concurrency
			break
		}
	}
	summary := "p99 stays under 1 s at every level tried"
	if cross > 0 {
		summary = fmt.Sprintf("p99 crosses 1 s at concurrency %d", cross)
	}
	fmt.Println(summary)
	if *out == "" {
		return nil
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	rssMu.Lock()
	defer rssMu.Unlock()
	if err := writeCSV(filepath.Join(*out, "load.csv"), results, rss); err != nil {
		return err
	}
	if err := drawPlot(filepath.Join(*out, "load.png"), results, rss); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return os.WriteFile(filepath.Join(*out, "summary.txt"), []byte(summary+"\n"), 0o644)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0fms", float64(d.Microseconds())/1000) }

// runLevel runs c clients for d and collects every latency.
func runLevel(ctx context.Context, client *http.Client, url, key string, qs []string, extra string, c int, d time.Duration) level {
	lctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var lat []time.Duration
	errs := 0
	var wg sync.WaitGroup
	begin := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; lctx.Err() == nil; i += c {
				q, _ := json.Marshal(qs[i%len(qs)])
				body := `{"query":` + string(q)
				if extra != "" {
					body += "," + extra
				}
				body += "}"
				t := time.Now()
				err := post(lctx, client, url+"/v1/retrieve", key, body)
				el := time.Since(t)
				if lctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
					return // cut off by the end of the level, not an error
				}
				mu.Lock()
				if err != nil {
					errs++
				} else {
					lat = append(lat, el)
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	wall := time.Since(begin)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		i := int(p*float64(len(lat))+0.5) - 1
		return lat[max(0, min(i, len(lat)-1))]
	}
	lv := level{Concurrency: c, Requests: len(lat) + errs, Errors: errs, Throughput: float64(len(lat)) / wall.Seconds(),
		P50: pct(0.50), P95: pct(0.95), P99: pct(0.99)}
	if len(lat) > 0 {
		lv.Max = lat[len(lat)-1]
	}
	return lv
}

func post(ctx context.Context, client *http.Client, url, key, body string) error {
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func get(ctx context.Context, client *http.Client, url string) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
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

var builtin = []string{
	"Who directed Inception?", "Which films did Christopher Nolan direct?", "Who starred in The Dark Knight?",
	"Which film won the Academy Award for Best Picture?", "Who composed the music of Interstellar?",
	"Which actors played in films directed by Steven Spielberg?", "What is the country of origin of Amélie?",
	"Who wrote the screenplay of Pulp Fiction?",
}

func loadQuestions(path string) ([]string, error) {
	if path == "" {
		return builtin, nil
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
			fmt.Fprintf(os.Stderr, "dmarload: %s:%d skipped (no question field)\n", path, n)
			continue
		}
		qs = append(qs, o.Question)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no questions", path)
	}
	return qs, sc.Err()
}

func writeCSV(path string, lv []level, rss []rssSample) error {
	var b strings.Builder
	b.WriteString("concurrency,requests,errors,throughput_rps,p50_ms,p95_ms,p99_ms,max_ms\n")
	for _, l := range lv {
		fmt.Fprintf(&b, "%d,%d,%d,%.3f,%.1f,%.1f,%.1f,%.1f\n", l.Concurrency, l.Requests, l.Errors, l.Throughput,
			msf(l.P50), msf(l.P95), msf(l.P99), msf(l.Max))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return err
	}
	b.Reset()
	b.WriteString("seconds,concurrency,rss_mib\n")
	for _, s := range rss {
		fmt.Fprintf(&b, "%.1f,%d,%.1f\n", s.At.Seconds(), s.C, float64(s.RSS)/(1<<20))
	}
	return os.WriteFile(strings.TrimSuffix(path, "load.csv")+"rss.csv", []byte(b.String()), 0o644)
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
