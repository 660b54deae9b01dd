// Command hostile sends issue 34's hostile request bodies to a running
// dmar serve and prints, for each, the status, the time to the answer and
// the server's resident memory (VmRSS, sampled every millisecond from
// /proc/PID/status) before, at its peak and after: once alone, then N at
// once. The bodies are deeply nested JSON under the routes' body limits: a
// 200 KB PUT /v1/documents (metadata arrays 100,000 deep), a 600 KB PUT
// (metadata objects 100,000 deep) and a 64 KB POST /v1/retrieve (an option
// 32,000 arrays deep). docs/durability.md gives the figures.
//
//	go run ./scripts/bench/hostile -url http://127.0.0.1:21000 -pid PID [-n 8] [-key KEY]
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "the server")
	pid := flag.Int("pid", 0, "the server's process id, for its memory (required)")
	n := flag.Int("n", 8, "requests at once in the second round")
	key := flag.String("key", "", "API key with write permission, when the server has keys")
	flag.Parse()
	if *pid == 0 {
		fmt.Fprintln(os.Stderr, "hostile: -pid is required")
		os.Exit(2)
	}
	nest := func(opening, closing string, depth int) string {
		return strings.Repeat(opening, depth) + strings.Repeat(closing, depth)
	}
	meta := func(v string) string {
		return `{"documents":[{"id":"a","title":"t","text":"x","metadata":{"a":` + v + `}}]}`
	}
	cases := []struct{ name, method, route, body string }{
		{"PUT metadata arrays 100k deep", "PUT", "/v1/documents", meta(nest("[", "]", 100_000))},
		{"PUT metadata objects 100k deep", "PUT", "/v1/documents", meta(strings.Repeat(`{"a":`, 100_000) + "1" + strings.Repeat("}", 100_000))},
		{"POST retrieve k 32k deep", "POST", "/v1/retrieve", `{"query":"x","k":` + nest("[", "]", 32_000) + `}`},
	}
	fmt.Printf("%-32s %8s %5s %-22s %10s %10s %10s %10s\n", "body", "bytes", "at", "statuses", "slowest", "rss before", "rss peak", "rss after")
	for _, c := range cases {
		for _, at := range []int{1, *n} {
			r := run(*url, *key, *pid, c.method, c.route, c.body, at)
			fmt.Printf("%-32s %8d %5d %-22s %10s %9.1fM %9.1fM %9.1fM\n", c.name, len(c.body), at, r.statuses,
				r.slowest.Round(time.Millisecond), mb(r.before), mb(r.peak), mb(r.after))
		}
	}
}

type result struct {
	statuses            string
	slowest             time.Duration
	before, peak, after int64
}

func run(url, key string, pid int, method, route, body string, at int) result {
	var res result
	res.before = rss(pid)
	var peak atomic.Int64
	peak.Store(res.before)
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if v := rss(pid); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	for range at {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(method, url+route, bytes.NewReader([]byte(body)))
			req.Header.Set("Content-Type", "application/json")
			if key != "" {
				req.Header.Set("Authorization", "Bearer "+key)
			}
			start := time.Now()
			status := "error"
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body) // drained for the connection's reuse; the status is what counts
				resp.Body.Close()
				status = strconv.Itoa(resp.StatusCode)
			}
			d := time.Since(start)
			mu.Lock()
			counts[status]++
			res.slowest = max(res.slowest, d)
			mu.Unlock()
		}()
	}
	wg.Wait()
	time.Sleep(100 * time.Millisecond)
	close(stop)
	<-sampled
	res.peak, res.after = peak.Load(), rss(pid)
	for s, k := range counts {
		res.statuses += fmt.Sprintf("%dx%s ", k, s)
	}
	res.statuses = strings.TrimSpace(res.statuses)
	return res
}

// rss is the process's resident memory in bytes (0 when it is gone).
func rss(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }
