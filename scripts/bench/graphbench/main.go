// Command graphbench measures dmar's embedded graph (memkg) on a KG bundle,
// for the large-graph benchmark (scripts/bench/biggraph.sh): the time to
// read the bundle and build the graph, to write and to load its snapshot,
// the heap the loaded graph holds per edge (runtime.MemStats after a GC,
// before and after the load), ego-subgraph latency for seeded random seeds
// with the hub cap on and off, and linking latency for real questions.
// Figures go to stdout, one "key=value" line per measurement.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/dmar-kg/dmar/internal/bench"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/stats"
)

func main() {
	dir := flag.String("bundle", "", "KG bundle folder (gengraph's output)")
	snap := flag.String("snapshot", "", "snapshot file (default: BUNDLE/kg.gob); built from the bundle when missing")
	rebuild := flag.Bool("rebuild", false, "build the snapshot from the bundle even if it exists")
	seeds := flag.Int("seeds", 300, "subgraph seeds, drawn from the real (non-synthetic) entities")
	questions := flag.String("questions", "../shared/data/kgqa/dev.jsonl", "JSONL with a question field, for linking latency")
	nq := flag.Int("n-questions", 200, "questions to link")
	seed := flag.Uint64("seed", 16, "random seed for the seeds")
	lean := flag.Bool("lean", false, "build the snapshot with readLean (a fraction of bundle.Read's memory) instead of bundle.Read")
	check := flag.Bool("check-lean", false, "only check that readLean and bundle.Read give the same graph")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "graphbench: -bundle is required")
		os.Exit(2)
	}
	if *snap == "" {
		*snap = *dir + "/kg.gob"
	}
	if *check {
		if err := checkLean(context.Background(), *dir); err != nil {
			fmt.Fprintln(os.Stderr, "graphbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*dir, *snap, *rebuild, *lean, *seeds, *questions, *nq, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "graphbench:", err)
		os.Exit(1)
	}
}

func run(dir, snap string, rebuild, lean bool, nSeeds int, qfile string, nq int, seed uint64) error {
	ctx := context.Background()
	if _, err := os.Stat(snap); err != nil || rebuild {
		start := time.Now()
		var g *memkg.Graph
		var read, build time.Duration
		if lean {
			ents, rels, triples, err := readLean(ctx, dir)
			if err != nil {
				return err
			}
			read = time.Since(start)
			start = time.Now()
			g = memkg.New(ents, rels, triples)
			build = time.Since(start)
		} else {
			b, err := bundle.Read(ctx, dir)
			if err != nil {
				return err
			}
			read = time.Since(start)
			start = time.Now()
			g = memkg.FromBundle(b)
			build = time.Since(start)
		}
		start = time.Now()
		if err := g.Save(snap); err != nil {
			return err
		}
		fmt.Printf("bundle_read_s=%.1f graph_build_s=%.1f snapshot_save_s=%.1f peak_rss_build_mib=%d\n",
			read.Seconds(), build.Seconds(), time.Since(start).Seconds(), vmHWM()>>20)
		g = nil
		runtime.GC()
		debug.FreeOSMemory()
	}
	before := heap()
	start := time.Now()
	g, err := memkg.Load(snap)
	if err != nil {
		return err
	}
	load := time.Since(start)
	after := heap()
	ents, triples, rels := g.Stats()
	st, _ := os.Stat(snap)
	fmt.Printf("entities=%d triples=%d relations=%d snapshot_mib=%d\n", ents, triples, rels, st.Size()>>20)
	fmt.Printf("snapshot_load_s=%.2f heap_mib=%d bytes_per_edge=%.1f peak_rss_mib=%d\n",
		load.Seconds(), (after-before)>>20, float64(after-before)/float64(triples), vmHWM()>>20)
	degreeSummary(g)

	roots := sampleRealRoots(g, nSeeds, seed)
	hubs := topEntities(g, 10)
	on, off := kg.DefaultSubgraphParams(), kg.DefaultSubgraphParams()
	off.HubDegree = 0
	// A warm-up pass, then each setting twice, alternating, so that a
	// collection or a busy neighbour process hits both alike.
	if _, err := g.Subgraphs(ctx, roots, on); err != nil {
		return err
	}
	for _, p := range []kg.SubgraphParams{on, off, on, off} {
		if err := subgraphBench(ctx, g, "seeds", roots, p); err != nil {
			return err
		}
	}
	for _, p := range []kg.SubgraphParams{on, off} {
		if err := subgraphBench(ctx, g, "top10_hubs", hubs, p); err != nil {
			return err
		}
	}
	qs, err := bench.LoadQuestions(qfile, io.Discard)
	if err != nil {
		return err
	}
	qs = qs[:min(nq, len(qs))]
	if err := linkBench(ctx, g, qs); err != nil {
		return err
	}
	// The context linker's dictionary is built on first use: what it adds.
	fmt.Printf("heap_with_context_dictionary_mib=%d\n", (heap()-before)>>20)
	runtime.KeepAlive(g)
	return nil
}

// heap is the live heap after a full collection.
func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// vmHWM is the process's peak resident set, from /proc.
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb); err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

func degreeSummary(g *memkg.Graph) {
	es := g.AllEntities()
	deg := make([]int, len(es))
	for i, e := range es {
		deg[i] = e.Degree
	}
	slices.Sort(deg)
	slices.Reverse(deg)
	over := func(d int) int {
		n := 0
		for _, x := range deg {
			if x <= d {
				break
			}
			n++
		}
		return n
	}
	fmt.Printf("degree_max=%d degree_top10=%v entities_over_1e5=%d over_1e4=%d over_500=%d degree_median=%d\n",
		deg[0], deg[:min(10, len(deg))], over(100_000), over(10_000), over(500), deg[len(deg)/2])
}

// topEntities are the n entities of highest degree.
func topEntities(g *memkg.Graph, n int) []string {
	es := slices.Clone(g.AllEntities())
	slices.SortFunc(es, func(a, b kg.Entity) int { return b.Degree - a.Degree })
	var out []string
	for _, e := range es[:min(n, len(es))] {
		out = append(out, e.QID)
	}
	return out
}

// sampleRealRoots draws n distinct real entities (QIDs below the synthetic
// range: questions link to real entities), seeded.
func sampleRealRoots(g *memkg.Graph, n int, seed uint64) []string {
	var realQIDs []string
	for _, e := range g.AllEntities() {
		if len(e.QID) < 11 { // synthetic QIDs are Q1000000000 and up
			realQIDs = append(realQIDs, e.QID)
		}
	}
	r := rand.New(rand.NewPCG(seed, 1))
	r.Shuffle(len(realQIDs), func(i, j int) { realQIDs[i], realQIDs[j] = realQIDs[j], realQIDs[i] })
	return realQIDs[:min(n, len(realQIDs))]
}

// subgraphBench times each seed's subgraph alone, then all seeds in one call
// (as a request's candidates are asked), five times.
func subgraphBench(ctx context.Context, g *memkg.Graph, name string, roots []string, p kg.SubgraphParams) error {
	var lat []float64
	nodes, edges, trunc := 0, 0, 0
	for _, r := range roots {
		start := time.Now()
		sgs, err := g.Subgraphs(ctx, []string{r}, p)
		if err != nil {
			return err
		}
		lat = append(lat, ms(time.Since(start)))
		sg := sgs[r]
		nodes += len(sg.Nodes)
		edges += len(sg.Edges)
		if sg.Truncated {
			trunc++
		}
	}
	var batch []float64
	for range 5 {
		start := time.Now()
		if _, err := g.Subgraphs(ctx, roots, p); err != nil {
			return err
		}
		batch = append(batch, ms(time.Since(start)))
	}
	slices.Sort(lat)
	fmt.Printf("subgraphs %s hub_degree=%d hops=%d max_nodes=%d seeds=%d per_seed_p50_ms=%.3f per_seed_p95_ms=%.3f per_seed_max_ms=%.1f call_%d_seeds_p50_ms=%.1f mean_nodes=%.1f mean_edges=%.1f truncated=%d\n",
		name, p.HubDegree, p.Hops, p.MaxNodes, len(roots), stats.SortedPercentile(lat, 50), stats.SortedPercentile(lat, 95), lat[len(lat)-1],
		len(roots), stats.Percentile(batch, 50), float64(nodes)/float64(len(roots)), float64(edges)/float64(len(roots)), trunc)
	return nil
}

func linkBench(ctx context.Context, g *memkg.Graph, qs []string) error {
	var lat []float64
	linked := 0
	for _, q := range qs {
		start := time.Now()
		ms0, err := g.Link(ctx, q)
		if err != nil {
			return err
		}
		lat = append(lat, ms(time.Since(start)))
		if len(ms0) > 0 {
			linked++
		}
	}
	start := time.Now()
	if _, _, err := g.LinkCandidates(ctx, qs[0]); err != nil {
		return err
	}
	first := time.Since(start)
	var clat []float64
	for _, q := range qs {
		start := time.Now()
		if _, _, err := g.LinkCandidates(ctx, q); err != nil {
			return err
		}
		clat = append(clat, ms(time.Since(start)))
	}
	fmt.Printf("link questions=%d linked=%d p50_ms=%.3f p95_ms=%.3f context_dictionary_build_s=%.1f candidates_p50_ms=%.3f candidates_p95_ms=%.3f\n",
		len(qs), linked, stats.Percentile(lat, 50), stats.Percentile(lat, 95), first.Seconds(), stats.Percentile(clat, 50), stats.Percentile(clat, 95))
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// readLean reads a bundle for memkg.New in a fraction of bundle.Read's
// memory: entities and relations through bundle.Read itself (same rules),
// from a copy of the bundle with no triples, then the triples streamed with
// every QID and PID string shared (bundle.Read holds three strings per
// line and a map of every triple for de-duplication; memkg.New
// de-duplicates anyway). checkLean shows the graphs are the same.
func readLean(ctx context.Context, dir string) ([]kg.Entity, map[string]kg.Relation, []kg.Triple, error) {
	tmp, err := os.MkdirTemp("", "graphbench-")
	if err != nil {
		return nil, nil, nil, err
	}
	defer os.RemoveAll(tmp)
	for _, f := range []string{"entities.jsonl", "relations.json"} {
		if err := os.Symlink(filepath.Join(dir, f), filepath.Join(tmp, f)); err != nil {
			return nil, nil, nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "triples.tsv"), nil, 0o644); err != nil {
		return nil, nil, nil, err
	}
	b, err := bundle.Read(ctx, tmp)
	if err != nil {
		return nil, nil, nil, err
	}
	intern := make(map[string]string, len(b.Entities))
	for _, e := range b.Entities {
		intern[e.QID] = e.QID
	}
	ents := b.Entities
	f, err := os.Open(filepath.Join(dir, "triples.tsv"))
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	str := func(b []byte) string {
		if s, ok := intern[string(b)]; ok {
			return s
		}
		s := string(b)
		intern[s] = s
		return s
	}
	var triples []kg.Triple
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := bytes.TrimRight(sc.Bytes(), "\r")
		h, rest, ok1 := bytes.Cut(line, []byte{'\t'})
		p, t, ok2 := bytes.Cut(rest, []byte{'\t'})
		if !ok1 || !ok2 || bytes.IndexByte(t, '\t') >= 0 || !kg.ValidQID(string(h)) || !kg.ValidPID(string(p)) || !kg.ValidQID(string(t)) {
			continue
		}
		for _, q := range [][]byte{h, t} {
			if _, ok := intern[string(q)]; !ok {
				s := str(q)
				ents = append(ents, kg.Entity{QID: s, Label: s}) // as bundle.Read does
			}
		}
		triples = append(triples, kg.Triple{Head: str(h), PID: str(p), Tail: str(t)})
	}
	return ents, b.Relations, triples, sc.Err()
}

// checkLean builds the graph both ways and compares entities and triples.
func checkLean(ctx context.Context, dir string) error {
	ents, rels, triples, err := readLean(ctx, dir)
	if err != nil {
		return err
	}
	lean := memkg.New(ents, rels, triples)
	b, err := bundle.Read(ctx, dir)
	if err != nil {
		return err
	}
	full := memkg.FromBundle(b)
	if !reflect.DeepEqual(lean.AllEntities(), full.AllEntities()) {
		return errors.New("readLean: entities differ from bundle.Read's")
	}
	if !reflect.DeepEqual(lean.Triples(), full.Triples()) {
		return errors.New("readLean: triples differ from bundle.Read's")
	}
	_, n, _ := full.Stats()
	fmt.Printf("check-lean: same %d entities and %d triples as bundle.Read\n", len(full.AllEntities()), n)
	return nil
}
