// Command traindata writes the Siamese GNN's contrastive training triplets as
// .npy tensors, featurised by internal/scoring/graphfeat (the serving
// featurisation) from subgraphs extracted by memkg's kg.Graph.Subgraphs with
// the default parameters (the serving subgraphs). See models/gnn/README.md.
//
// Per anchor subgraph (see anchor) it writes two triplets sharing the anchor
// and the positive (node drop and edge drop with p1): one with a random KG
// ego graph sharing no node with the anchor, one with a hard negative made
// from the anchor by strong perturbation with p2: add/delete nodes and edges,
// rewire edges among the same nodes, or permute entities over the structure.
//
// Output per split (train, holdout; anchors split by root QID hash): x.npy
// [nodes,F] real node rows; off.npy [G+1] node offsets per graph; aout.npy,
// ain.npy [nnz,3] (graph,row,col) with aout_val.npy, ain_val.npy [nnz];
// triplets.npy [T,4] (anchor, positive, negative, kind 0 random/1 perturb/
// 2 rewire/3 permute/4 order: path anchor, positive with at least one
// edge or node lost, permuted negative) of graph ids.
package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/dmar-kg/dmar/internal/npy"
	"hash/fnv"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/dmar-kg/dmar/internal/datapath"
	"github.com/dmar-kg/dmar/internal/kg"
	"github.com/dmar-kg/dmar/internal/kg/bundle"
	"github.com/dmar-kg/dmar/internal/kg/memkg"
	"github.com/dmar-kg/dmar/internal/progress"
	"github.com/dmar-kg/dmar/internal/scoring/graphfeat"
)

func main() {
	var (
		data     = flag.String("data", "", "KG bundle directory (default: shared codexm)")
		out      = flag.String("out", "", "output directory (required)")
		seed     = flag.Uint64("seed", 1, "random seed")
		anchors  = flag.Int("anchors", 2000, "training anchors (2 triplets each)")
		holdout  = flag.Int("holdout", 1000, "held-out anchors")
		paths    = flag.Int("paths", 32000, "training path anchors (1 order triplet each); held out: paths/6")
		p1       = flag.Float64("p1", 0.1, "positive node/edge drop probability")
		p2       = flag.Float64("p2", 0.5, "hard-negative perturbation probability")
		minNodes = flag.Int("min-nodes", 3, "smallest anchor subgraph")
		fixture  = flag.String("fixture", "", "instead: featurise the subgraphs of this JSON file ([]kg.Subgraph) densely into -out")
	)
	flag.Parse()
	if *out == "" {
		log.Fatal("traindata: -out is required")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	if *fixture != "" {
		if err := writeFixture(*fixture, *out); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := run(context.Background(), *data, *out, *seed, *anchors, *holdout, *paths, *p1, *p2, *minNodes); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, data, out string, seed uint64, nTrain, nHold, nPath int, p1, p2 float64, minNodes int) error {
	if data == "" {
		d, err := datapath.Dataset("codexm")
		if err != nil {
			return err
		}
		data = d
	}
	b, err := bundle.Read(ctx, data)
	if err != nil {
		return err
	}
	g := memkg.FromBundle(b)
	params := kg.DefaultSubgraphParams()
	pl := &pool{ents: g.AllEntities(), hub: params.HubDegree}
	for _, t := range g.Triples() {
		pl.pids = append(pl.pids, t.PID)
	}
	roots := make([]string, len(pl.ents))
	for i, e := range pl.ents {
		roots[i] = e.QID
	}
	subs, err := g.Subgraphs(ctx, roots, params)
	if err != nil {
		return err
	}
	var trainRoots, holdRoots []string
	for _, q := range roots { // sorted by QID: deterministic
		if len(subs[q].Nodes) < minNodes {
			continue
		}
		if heldOut(q) {
			holdRoots = append(holdRoots, q)
		} else {
			trainRoots = append(trainRoots, q)
		}
	}
	log.Printf("traindata: %d entities, %d triples; anchor pools: train %d, holdout %d", len(pl.ents), len(pl.pids), len(trainRoots), len(holdRoots))
	r := rand.New(rand.NewPCG(seed, 0x646d6172))
	for _, split := range []struct {
		name     string
		roots    []string
		n, paths int
	}{{"train", trainRoots, nTrain, nPath}, {"holdout", holdRoots, nHold, nPath / 6}} {
		if err := writeSplit(ctx, g, filepath.Join(out, split.name), split.roots, split.n, split.paths, subs, r, pl, p1, p2); err != nil {
			return fmt.Errorf("%s: %w", split.name, err)
		}
	}
	return nil
}

// probeRoots are the entities of the ordering test
// (internal/scoring/gnnref/order_test.go); they are never training anchors.
var probeRoots = map[string]bool{"Q25191": true, "Q25188": true, "Q2263": true}

// heldOut puts about 1 in 10 roots in the held-out split, by FNV-1a of the
// QID, and the ordering test's entities.
func heldOut(q string) bool {
	if probeRoots[q] {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(q))
	return h.Sum32()%10 == 0
}

// anchor draws an anchor subgraph of root: 60% the serving ego graph (h=1),
// 20% the h=2 ego graph (so hops >= 2 are seen), 20% a random walk of 2-5
// steps inside the h=2 ego graph (small, path-like graphs). All come from
// kg.Graph.Subgraphs.
func anchor(ctx context.Context, g kg.Graph, root string, subs map[string]kg.Subgraph, r *rand.Rand) (kg.Subgraph, error) {
	u := r.Float64()
	if u < 0.6 {
		return subs[root], nil
	}
	p := kg.DefaultSubgraphParams()
	p.Hops = 2
	m, err := g.Subgraphs(ctx, []string{root}, p)
	if err != nil {
		return kg.Subgraph{}, err
	}
	if u < 0.8 {
		return m[root], nil
	}
	w := walk(m[root], 2+r.IntN(4), r)
	if len(w.Nodes) < 3 {
		return subs[root], nil
	}
	return w, nil
}

// pathAnchor is a random walk inside root's h=2 ego graph: half of them of 2
// steps (3 nodes, where one lost edge is half the structure: the hardest case
// for telling a lost edge from a reordering), the rest of 2-5 steps.
func pathAnchor(ctx context.Context, g kg.Graph, root string, r *rand.Rand) (kg.Subgraph, error) {
	p := kg.DefaultSubgraphParams()
	p.Hops = 2
	m, err := g.Subgraphs(ctx, []string{root}, p)
	if err != nil {
		return kg.Subgraph{}, err
	}
	steps := 2
	if r.IntN(2) == 0 {
		steps += r.IntN(4)
	}
	return walk(m[root], steps, r), nil
}

func writeSplit(ctx context.Context, kgr kg.Graph, dir string, roots []string, n, nPath int, subs map[string]kg.Subgraph, r *rand.Rand, pl *pool, p1, p2 float64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var graphs []kg.Subgraph
	var trip []int32
	meter := progress.New(os.Stderr, "triplets "+filepath.Base(dir), "anchors", n)
	for k := 0; k < n; k++ {
		a, err := anchor(ctx, kgr, roots[r.IntN(len(roots))], subs, r)
		if err != nil {
			return err
		}
		base := int32(len(graphs))
		graphs = append(graphs, a, positive(a, p1, r))
		// Random negative: no node in common with the anchor.
		an := a.NodeSet()
		var neg kg.Subgraph
		for try := 0; try < 100; try++ {
			c := subs[roots[r.IntN(len(roots))]]
			if disjoint(an, c) {
				neg = c
				break
			}
		}
		if neg.Root != "" {
			graphs = append(graphs, neg)
			trip = append(trip, base, base+1, int32(len(graphs)-1), 0)
		}
		var hard kg.Subgraph
		kind := int32(1 + r.IntN(3))
		switch kind {
		case 1:
			hard = perturbHard(a, p2, r, pl)
		case 2:
			hard = rewire(a, p2, r)
		case 3:
			hard = permute(a, p2, r)
		}
		graphs = append(graphs, hard)
		trip = append(trip, base, base+1, int32(len(graphs)-1), kind)
		meter.Add(1)
	}
	meter.Done()
	// Order triplets: a path-like anchor, its copy that lost at least one edge
	// or node, and the same entities permuted over the same structure. They
	// teach what the spec's A->B->C vs A->C->B case asks: which entity sits
	// where matters more than one missing edge.
	for k := 0; k < nPath; {
		a, err := pathAnchor(ctx, kgr, roots[r.IntN(len(roots))], r)
		if err != nil {
			return err
		}
		if len(a.Nodes) < 3 || len(a.Edges) < 2 {
			continue
		}
		base := int32(len(graphs))
		graphs = append(graphs, a, positiveChanged(a, p1, r), permute(a, p2, r))
		trip = append(trip, base, base+1, base+2, 4)
		k++
	}
	return writeGraphs(dir, graphs, trip)
}

func disjoint(a map[string]struct{}, g kg.Subgraph) bool {
	for _, n := range g.Nodes {
		if _, ok := a[n.QID]; ok {
			return false
		}
	}
	return true
}

// writeGraphs featurises graphs in chunks and stores the non-zeros.
func writeGraphs(dir string, graphs []kg.Subgraph, trip []int32) error {
	var (
		x               []float32
		off             = []int64{0}
		aout, ain       []int32
		aoutVal, ainVal []float32
		n               = graphfeat.DefaultN
	)
	for lo := 0; lo < len(graphs); lo += 256 {
		hi := min(lo+256, len(graphs))
		b, err := graphfeat.Featurize(graphs[lo:hi], n)
		if err != nil {
			return err
		}
		for gi := 0; gi < b.B; gi++ {
			g := int32(lo + gi)
			used := 0
			for i := 0; i < n; i++ {
				if b.Mask[gi*n+i] == 1 {
					used = i + 1
				}
			}
			x = append(x, b.X[gi*n*graphfeat.F:(gi*n+used)*graphfeat.F]...)
			off = append(off, off[len(off)-1]+int64(used))
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					if v := b.AdjOut[(gi*n+i)*n+j]; v != 0 {
						aout = append(aout, g, int32(i), int32(j))
						aoutVal = append(aoutVal, v)
					}
					if v := b.AdjIn[(gi*n+i)*n+j]; v != 0 {
						ain = append(ain, g, int32(i), int32(j))
						ainVal = append(ainVal, v)
					}
				}
			}
		}
	}
	files := []struct {
		name  string
		data  any
		shape []int
	}{
		{"x.npy", x, []int{len(x) / graphfeat.F, graphfeat.F}},
		{"off.npy", off, []int{len(off)}},
		{"aout.npy", aout, []int{len(aout) / 3, 3}},
		{"aout_val.npy", aoutVal, []int{len(aoutVal)}},
		{"ain.npy", ain, []int{len(ain) / 3, 3}},
		{"ain_val.npy", ainVal, []int{len(ainVal)}},
		{"triplets.npy", trip, []int{len(trip) / 4, 4}},
	}
	for _, f := range files {
		if err := npy.Write(filepath.Join(dir, f.name), f.data, f.shape...); err != nil {
			return err
		}
	}
	log.Printf("traindata: %s: %d graphs, %d triplets, %d nodes", dir, len(graphs), len(trip)/4, len(x)/graphfeat.F)
	return nil
}
