package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dmar-kg/dmar/internal/stats"
)

// Failover is dmar bench failover: a closed loop of retrieve requests and
// document writes through dmar against a Weaviate cluster while one node
// after another is killed with SIGKILL, left down for Outage, and started
// again as it was. It reports failed requests, the acknowledged writes that
// no replica holds once the cluster is whole again (read at consistency
// ALL), the p99 of the requests made while a node was down, and how long a
// restarted node took to serve and to catch up.
type Failover struct {
	Nodes    []string // the cluster's nodes (base URLs), in the order dmar names them
	Kills    []int    // which nodes to kill, in turn (indexes into Nodes)
	Retrieve func(ctx context.Context, query string) error
	// Write stores one document and returns nil only when it was
	// acknowledged (written at the configured consistency).
	Write func(ctx context.Context, id, title, text string) error
	// Missing returns the ids among ids that no replica holds.
	Missing func(ctx context.Context, ids []string) ([]string, error)
	// NodeObjects is how many objects of the collection each node holds.
	NodeObjects func(ctx context.Context) (map[string]int64, error)
	Queries     []string
	Texts       []Text // what writes are made of
	Readers     int
	Writers     int
	Settle      time.Duration // load before the first kill and after each node is back
	Outage      time.Duration // how long a killed node stays down
	CatchUp     time.Duration // how long to wait for a restarted node to hold every object
	RunID       string        // prefix of the written documents' ids
}

// Text is a document's title and text.
type Text struct{ Title, Text string }

// FailoverResult is the run's outcome.
type FailoverResult struct {
	Requests, Failed   int
	AckedWrites, Lost  int
	OutageRequests     int
	OutageP99          float64 // ms
	Kills              []killReport
	RetrieveP50, P99   float64 // ms, retrieve requests over the whole run
	WriteP50, WriteP99 float64
	Errors             []string // the first few failures
}

type killReport struct {
	Node             string
	Name             string        // the node's name in the cluster
	At               time.Duration // since the start of the load
	Noticed          time.Duration // until another node reported it down (-1: not seen)
	Serving          time.Duration // from restart to ready and every node HEALTHY
	CaughtUp         time.Duration // from restart to holding as many objects as the others (-1: not within CatchUp)
	Requests, Failed int
	P99              float64
}

type sample struct {
	start, end time.Time
	write      bool
	err        error
}

// Run runs the benchmark, printing its report to out.
func (f Failover) Run(ctx context.Context, out io.Writer) (FailoverResult, error) {
	nodes, err := f.openNodes()
	if err != nil {
		return FailoverResult{}, err
	}
	if err := f.waitHealthy(ctx, 60*time.Second); err != nil {
		return FailoverResult{}, fmt.Errorf("bench failover: the cluster is not healthy before the run: %w", err)
	}
	fmt.Fprintf(out, "failover: %d nodes, %d readers, %d writers; each of %d kills leaves a node down for %s\n",
		len(f.Nodes), f.Readers, f.Writers, len(f.Kills), f.Outage)

	load, stopLoad := context.WithCancel(ctx)
	t0 := time.Now()
	l := f.startLoad(load)
	res := FailoverResult{}
	windows, err := f.killAll(ctx, nodes, t0, out, &res)
	stopLoad()
	l.wg.Wait()
	if err != nil {
		return res, err
	}
	f.summarise(&res, l.samples, windows)
	if err := f.waitHealthy(ctx, 120*time.Second); err != nil {
		return res, fmt.Errorf("bench failover: the cluster did not become healthy after the run: %w", err)
	}
	sort.Strings(l.acked)
	res.AckedWrites = len(l.acked)
	missing, err := f.Missing(ctx, l.acked)
	if err != nil {
		return res, fmt.Errorf("bench failover: reading the acknowledged writes back: %w", err)
	}
	res.Lost = len(missing)
	f.report(out, res, missing)
	return res, nil
}

// openNodes finds each node's process (a cluster of at least 2).
func (f Failover) openNodes() ([]procNode, error) {
	if len(f.Nodes) < 2 {
		return nil, fmt.Errorf("bench failover: the index names %d node; a cluster of at least 2 (3 to survive a lost node at QUORUM) is needed", len(f.Nodes))
	}
	nodes := make([]procNode, len(f.Nodes))
	for i, u := range f.Nodes {
		n, err := newProcNode(u)
		if err != nil {
			return nil, err
		}
		if _, err := n.pid(); err != nil {
			return nil, fmt.Errorf("bench failover: %w", err)
		}
		nodes[i] = n
	}
	return nodes, nil
}

// loadRun is the closed loop's clients and what they recorded.
type loadRun struct {
	wg      sync.WaitGroup
	mu      sync.Mutex
	samples []sample
	acked   []string // ids of the acknowledged writes
}

func (l *loadRun) record(s sample, id string) {
	l.mu.Lock()
	l.samples = append(l.samples, s)
	if s.write && s.err == nil {
		l.acked = append(l.acked, id)
	}
	l.mu.Unlock()
}

// startLoad starts the readers and the writers, back to back until load
// ends.
func (f Failover) startLoad(load context.Context) *loadRun {
	l := &loadRun{}
	for r := 0; r < f.Readers; r++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			f.reader(load, l, r)
		}()
	}
	for w := 0; w < f.Writers; w++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			f.writer(load, l, w)
		}()
	}
	return l
}

func (f Failover) reader(load context.Context, l *loadRun, r int) {
	rng := rand.New(rand.NewPCG(uint64(r), 1))
	for load.Err() == nil {
		q := f.Queries[rng.IntN(len(f.Queries))]
		s := sample{start: time.Now()}
		s.err = f.Retrieve(load, q)
		s.end = time.Now()
		if load.Err() == nil {
			l.record(s, "")
		}
	}
}

func (f Failover) writer(load context.Context, l *loadRun, w int) {
	rng := rand.New(rand.NewPCG(uint64(w), 2))
	for n := 0; load.Err() == nil; n++ {
		t := f.Texts[rng.IntN(len(f.Texts))]
		id := fmt.Sprintf("%s-w%d-%d", f.RunID, w, n)
		s := sample{start: time.Now(), write: true}
		// A write runs to its end: one cut off by the end of the run
		// would be neither acknowledged nor failed.
		s.err = f.Write(context.WithoutCancel(load), id, t.Title+" (failover "+id+")", t.Text)
		s.end = time.Now()
		l.record(s, id)
	}
}

// killAll lets the load settle, then kills the nodes of f.Kills in turn
// (killOne), settling after each; it returns the outage windows.
func (f Failover) killAll(ctx context.Context, nodes []procNode, t0 time.Time, out io.Writer, res *FailoverResult) ([][2]time.Time, error) {
	var windows [][2]time.Time
	if err := sleepCtx(ctx, f.Settle); err != nil {
		return windows, err
	}
	for k, i := range f.Kills {
		rep, win, err := f.killOne(ctx, nodes, i, t0, out)
		if err != nil {
			return windows, fmt.Errorf("kill %d (%s): %w", k+1, f.Nodes[i], err)
		}
		res.Kills = append(res.Kills, rep)
		windows = append(windows, win)
		if err := sleepCtx(ctx, f.Settle); err != nil {
			return windows, err
		}
	}
	return windows, nil
}

// killOne kills node i, restarts it after Outage and waits for it to
// serve and catch up; the outage window runs from the kill to serving.
func (f Failover) killOne(ctx context.Context, nodes []procNode, i int, t0 time.Time, out io.Writer) (killReport, [2]time.Time, error) {
	rep := killReport{Node: f.Nodes[i], Noticed: -1, CaughtUp: -1}
	start, err := nodes[i].kill()
	if err != nil {
		return rep, [2]time.Time{}, err
	}
	killed := time.Now()
	rep.At = killed.Sub(t0)
	fmt.Fprintf(out, "kill: node %s killed -9 at %.1fs\n", f.Nodes[i], rep.At.Seconds())
	// The node's name in the cluster is Weaviate's CLUSTER_HOSTNAME; when
	// another node reports it down.
	rep.Name = start.getenv("CLUSTER_HOSTNAME")
	deadline := killed.Add(f.Outage)
	for time.Now().Before(deadline) && rep.Name != "" && rep.Noticed < 0 {
		if st, err := f.nodeStatus(ctx, f.Nodes[(i+1)%len(f.Nodes)]); err == nil && st[rep.Name] != "HEALTHY" {
			rep.Noticed = time.Since(killed)
			break
		}
		_ = sleepCtx(ctx, 200*time.Millisecond)
	}
	if err := sleepCtx(ctx, time.Until(deadline)); err != nil {
		return rep, [2]time.Time{}, err
	}
	restarted := time.Now()
	pid, err := start.start()
	if err != nil {
		return rep, [2]time.Time{}, err
	}
	fmt.Fprintf(out, "kill: node %s restarted as pid %d after %.1fs down\n", f.Nodes[i], pid, restarted.Sub(killed).Seconds())
	for !f.ready(ctx, f.Nodes[i]) || !f.healthy(ctx) {
		if time.Since(restarted) > 3*time.Minute {
			return rep, [2]time.Time{}, fmt.Errorf("the restarted node was not serving after 3 minutes")
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return rep, [2]time.Time{}, err
		}
	}
	serving := time.Now()
	rep.Serving = serving.Sub(restarted)
	if rep.Name != "" && f.NodeObjects != nil {
		for time.Since(restarted) < f.CatchUp {
			if c, err := f.NodeObjects(ctx); err == nil && caughtUp(c, rep.Name) {
				rep.CaughtUp = time.Since(restarted)
				break
			}
			if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
				return rep, [2]time.Time{}, err
			}
		}
	}
	return rep, [2]time.Time{killed, serving}, nil
}

// caughtUp: the node holds as many objects as the most any node holds.
func caughtUp(counts map[string]int64, name string) bool {
	var most int64
	for _, c := range counts {
		most = max(most, c)
	}
	c, ok := counts[name]
	return ok && c == most
}

func (f Failover) summarise(res *FailoverResult, samples []sample, windows [][2]time.Time) {
	var rt, wt, outage []float64
	perKill := make([][]float64, len(windows))
	for _, s := range samples {
		ms := float64(s.end.Sub(s.start).Microseconds()) / 1000
		res.Requests++
		if s.err != nil {
			res.Failed++
			if len(res.Errors) < 5 {
				res.Errors = append(res.Errors, s.err.Error())
			}
		}
		if s.write {
			wt = append(wt, ms)
		} else {
			rt = append(rt, ms)
		}
		for k, w := range windows {
			// A request that overlaps the outage at all counts as one of it.
			if !s.end.After(w[0]) || !s.start.Before(w[1]) {
				continue
			}
			outage = append(outage, ms)
			perKill[k] = append(perKill[k], ms)
			res.Kills[k].Requests++
			if s.err != nil {
				res.Kills[k].Failed++
			}
			break
		}
	}
	res.OutageRequests = len(outage)
	res.OutageP99 = stats.Percentile(outage, 99)
	for k := range perKill {
		res.Kills[k].P99 = stats.Percentile(perKill[k], 99)
	}
	res.RetrieveP50, res.P99 = stats.Percentile(rt, 50), stats.Percentile(rt, 99)
	res.WriteP50, res.WriteP99 = stats.Percentile(wt, 50), stats.Percentile(wt, 99)
}

func (f Failover) report(out io.Writer, res FailoverResult, missing []string) {
	for k, r := range res.Kills {
		noticed, caught := "not seen", fmt.Sprintf("holding every object not within %s", f.CatchUp)
		if r.Noticed >= 0 {
			noticed = fmt.Sprintf("%.1fs", r.Noticed.Seconds())
		}
		if r.CaughtUp >= 0 {
			caught = fmt.Sprintf("holding every object in %.1fs", r.CaughtUp.Seconds())
		}
		fmt.Fprintf(out, "kill %d: node %s (%s) at %.1fs; reported down after %s; after restart: serving in %.1fs, %s; %d requests during its outage, %d failed, p99 %.0f ms\n",
			k+1, r.Node, r.Name, r.At.Seconds(), noticed, r.Serving.Seconds(), caught, r.Requests, r.Failed, r.P99)
	}
	fmt.Fprintf(out, "retrieve: p50 %.0f ms, p99 %.0f ms; write (one document, acknowledged at the write consistency): p50 %.0f ms, p99 %.0f ms\n",
		res.RetrieveP50, res.P99, res.WriteP50, res.WriteP99)
	for _, e := range res.Errors {
		fmt.Fprintf(out, "failed: %s\n", e)
	}
	fmt.Fprintf(out, "lost: %d of %d acknowledged writes held by no replica (read by id at consistency ALL once every node was back)", res.Lost, res.AckedWrites)
	if len(missing) > 0 {
		fmt.Fprintf(out, ", first %s", strings.Join(missing[:min(5, len(missing))], " "))
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "failover requests=%d failed=%d acked_writes=%d lost=%d p99_ms=%.0f\n", res.Requests, res.Failed, res.AckedWrites, res.Lost, res.OutageP99)
}

var probeClient = &http.Client{Timeout: 3 * time.Second}

// ready: the node answers /v1/.well-known/ready.
func (f Failover) ready(ctx context.Context, base string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/.well-known/ready", http.NoBody)
	if err != nil {
		return false
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// nodeStatus is every node's status as the node at base reports them.
func (f Failover) nodeStatus(ctx context.Context, base string) (map[string]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/nodes", http.NoBody)
	if err != nil {
		return nil, err
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Nodes []struct{ Name, Status string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(body.Nodes))
	for _, n := range body.Nodes {
		out[n.Name] = n.Status
	}
	return out, nil
}

// healthy: some node reports every node of the cluster HEALTHY.
func (f Failover) healthy(ctx context.Context) bool {
	for _, n := range f.Nodes {
		st, err := f.nodeStatus(ctx, n)
		if err != nil {
			continue
		}
		if len(st) < len(f.Nodes) {
			return false
		}
		for _, s := range st {
			if s != "HEALTHY" {
				return false
			}
		}
		return true
	}
	return false
}

func (f Failover) waitHealthy(ctx context.Context, limit time.Duration) error {
	end := time.Now().Add(limit)
	for !f.healthy(ctx) {
		if time.Now().After(end) {
			return fmt.Errorf("not every node HEALTHY after %s", limit)
		}
		if err := sleepCtx(ctx, 250*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
