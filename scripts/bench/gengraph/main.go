// Command gengraph grows a KG bundle (codexm) into a Wikidata-shaped graph
// of a given number of edges, for the large-graph benchmark
// (scripts/bench/biggraph.sh; docs/operations.md, "A graph a hundred times
// larger"). Seeded: the same flags give the same bytes.
//
// Method:
//   - every real entity, relation and triple is kept, byte for byte;
//   - synthetic entities get QIDs from Q1000000000 up (real Wikidata QIDs
//     are below Q140000000 today) and one-word labels "Zq" + letters, a
//     word no real label or alias has (checked: a collision is an error);
//   - synthetic edges are added head by head: each synthetic entity gets an
//     out-degree drawn from a geometric distribution of mean -out (Wikidata
//     items average about 12 item-valued statements), a property drawn from
//     the real triples' property frequencies, and a tail drawn from a Zipf
//     law (exponent -zipf) over a ranking of all entities that puts the
//     real ones first, by real degree, then the synthetic ones in a seeded
//     random order. So the in-degree is heavy-tailed: with the defaults and
//     20M edges the top entities get 10^5-10^6 edges, like "human" (Q5) or
//     "United States" (Q30) in Wikidata, and most get a few;
//   - no self-loops, no repeated (head, property, tail): such draws are
//     dropped, and the synthetic entities are sized with 15% to spare for
//     them (enough from about 10^4 edges up; a run that falls short says so);
//   - output: the KG bundle format (triples.tsv, entities.jsonl,
//     relations.json) that dmar's embedded loader reads (and `dmar load kg`
//     writes to Neo4j).
//
// Files are written under .part names and renamed when complete.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const synthBase = 1_000_000_000

func main() {
	in := flag.String("in", "../shared/data/codexm", "the real KG bundle")
	out := flag.String("out", "", "output folder (never inside the repository)")
	edges := flag.Int("edges", 20_000_000, "total edges, real ones included")
	meanOut := flag.Float64("out-degree", 12, "mean out-degree of a synthetic entity")
	zipf := flag.Float64("zipf", 1.05, "exponent of the tails' Zipf law (> 1)")
	seed := flag.Uint64("seed", 16, "random seed")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gengraph: -out is required")
		os.Exit(2)
	}
	g := gen{in: *in, out: *out, edges: *edges, meanOut: *meanOut, zipf: *zipf, seed: *seed}
	if err := g.run(); err != nil {
		fmt.Fprintln(os.Stderr, "gengraph:", err)
		os.Exit(1)
	}
}

type gen struct {
	in, out string
	edges   int
	meanOut float64
	zipf    float64
	seed    uint64
}

type realKG struct {
	qids    []string          // real entities by real degree, descending (ties: QID)
	words   map[string]bool   // lowercased words of real labels and aliases
	labels  map[string]string // QID -> label
	pids    []string          // one per real triple: sampling one is sampling by frequency
	triples int
}

func (g gen) run() error {
	if g.zipf <= 1 || g.meanOut < 1 || g.edges < 1 {
		return errors.New("need -zipf > 1, -out-degree >= 1 and -edges >= 1")
	}
	if err := os.MkdirAll(g.out, 0o755); err != nil {
		return err
	}
	r, err := readReal(g.in)
	if err != nil {
		return err
	}
	if r.triples > g.edges {
		return fmt.Errorf("-edges %d is below the %d real triples", g.edges, r.triples)
	}
	nSyn := int(math.Ceil(float64(g.edges-r.triples)/g.meanOut*1.15)) + 1
	rng := rand.New(rand.NewPCG(g.seed, 0x6d6172))
	// Ranking of tails: real entities first, then the synthetic ones shuffled.
	synRank := rng.Perm(nSyn)
	nAll := len(r.qids) + nSyn
	tailOf := func(rank int) string {
		if rank < len(r.qids) {
			return r.qids[rank]
		}
		return synQID(synRank[rank-len(r.qids)])
	}
	z := rand.NewZipf(rand.New(rand.NewPCG(g.seed, 0x7a697066)), g.zipf, 1, uint64(nAll-1))
	for _, f := range []string{"triples.tsv", "entities.jsonl", "relations.json"} {
		if err := copyFile(filepath.Join(g.in, f), filepath.Join(g.out, f+".part")); err != nil {
			return err
		}
	}
	tf, err := os.OpenFile(filepath.Join(g.out, "triples.tsv.part"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer tf.Close()
	ef, err := os.OpenFile(filepath.Join(g.out, "entities.jsonl.part"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer ef.Close()
	tw, ew := bufio.NewWriterSize(tf, 1<<20), bufio.NewWriterSize(ef, 1<<20)
	p := 1 / g.meanOut // geometric on {1, 2, ...} with mean meanOut
	total, made := r.triples, 0
	type pt struct{ pid, tail string }
	for i := 0; i < nSyn && total < g.edges; i++ {
		head := synQID(i)
		label := synLabel(i)
		if r.words[strings.ToLower(label)] {
			return fmt.Errorf("synthetic label %q is a word of a real label", label)
		}
		fmt.Fprintf(ew, "{\"qid\": %q, \"label\": %q}\n", head, label)
		made++
		d := 1 + int(math.Floor(math.Log(1-rng.Float64())/math.Log(1-p)))
		seen := make(map[pt]bool, d)
		for k := 0; k < d && total < g.edges; k++ {
			e := pt{r.pids[rng.IntN(len(r.pids))], tailOf(int(z.Uint64()))}
			if e.tail == head || seen[e] {
				continue
			}
			seen[e] = true
			fmt.Fprintf(tw, "%s\t%s\t%s\n", head, e.pid, e.tail)
			total++
		}
	}
	// Tails are drawn from every synthetic entity, headed or not: the ones
	// the loop did not reach still need their entity line.
	for i := made; i < nSyn; i++ {
		label := synLabel(i)
		if r.words[strings.ToLower(label)] {
			return fmt.Errorf("synthetic label %q is a word of a real label", label)
		}
		fmt.Fprintf(ew, "{\"qid\": %q, \"label\": %q}\n", synQID(i), label)
	}
	if total < g.edges {
		return fmt.Errorf("made %d edges of %d: raise -out-degree", total, g.edges)
	}
	for _, w := range []*bufio.Writer{tw, ew} {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	names := []string{"triples.tsv", "entities.jsonl", "relations.json"}
	for _, f := range names {
		if err := os.Rename(filepath.Join(g.out, f+".part"), filepath.Join(g.out, f)); err != nil {
			return err
		}
	}
	fmt.Printf("gengraph: %d entities (%d real, %d synthetic), %d edges (%d real, %d synthetic), seed %d, zipf %.2f, mean out-degree %.1f -> %s\n",
		len(r.qids)+nSyn, len(r.qids), nSyn, total, r.triples, total-r.triples, g.seed, g.zipf, g.meanOut, g.out)
	return nil
}

func synQID(i int) string { return fmt.Sprintf("Q%d", synthBase+i) }

// synLabel is "Zq" and i written in base 26 with letters: one word, unique
// per entity, that no English or real label word is.
func synLabel(i int) string {
	b := []byte{'Z', 'q'}
	for {
		b = append(b, byte('a'+i%26))
		i /= 26
		if i == 0 {
			break
		}
	}
	return string(b)
}

func readReal(dir string) (*realKG, error) {
	r := &realKG{words: map[string]bool{}, labels: map[string]string{}}
	degree := map[string]int{}
	tf, err := os.Open(filepath.Join(dir, "triples.tsv"))
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	sc := bufio.NewScanner(tf)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			continue
		}
		degree[f[0]]++
		degree[f[2]]++
		r.pids = append(r.pids, f[1])
		r.triples++
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	ef, err := os.Open(filepath.Join(dir, "entities.jsonl"))
	if err != nil {
		return nil, err
	}
	defer ef.Close()
	sc = bufio.NewScanner(ef)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e struct {
			QID     string   `json:"qid"`
			Label   string   `json:"label"`
			Aliases []string `json:"aliases"`
		}
		if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &e) != nil || e.QID == "" {
			continue
		}
		r.labels[e.QID] = e.Label
		for _, s := range append([]string{e.Label}, e.Aliases...) {
			for _, w := range strings.Fields(strings.ToLower(s)) {
				r.words[w] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for q := range degree {
		if _, ok := r.labels[q]; !ok {
			r.labels[q] = q // the bundle reader adds such entities with the QID as label
		}
	}
	for q := range r.labels {
		r.qids = append(r.qids, q)
	}
	sort.Slice(r.qids, func(i, j int) bool {
		a, b := r.qids[i], r.qids[j]
		if degree[a] != degree[b] {
			return degree[a] > degree[b]
		}
		return a < b
	})
	return r, nil
}

// copyFile copies src to dst, ending it with a newline.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if len(b) > 0 && b[len(b)-1] != '\n' && !strings.HasSuffix(src, ".json") {
		b = append(b, '\n')
	}
	return os.WriteFile(dst, b, 0o644)
}
